"""The advisor's calculators: loan (等额本息/等额本金), transaction taxes, total cost."""
