"""Mortgage maths: 等额本息 (equal payment) and 等额本金 (equal principal), exact to the cent.

Computed with :mod:`decimal` at 40 significant digits and rounded half-up to the cent only at
the end, so results match an independent computation exactly::

    月供 = 贷款金额 × 月利率 × (1+月利率)^月数 / ((1+月利率)^月数 − 1)

Totals use the unrounded monthly payment (``total_payment = monthly × months``).

Example::

    >>> r = compute_loan(price=3_000_000, down_payment_ratio=0.3, years=30, rate=3.1)
    >>> r.monthly_payment, r.loan_amount, r.total_interest
    (8967.34, 2100000.0, 1128243.98)
    >>> compute_loan(price=3_000_000, down_payment_ratio=0.3, years=30, rate=3.1,
    ...              method="equal_principal").first_month_payment
    11258.33
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from typing import Any, Literal

Method = Literal["equal_payment", "equal_principal"]
ScheduleKind = Literal["none", "yearly", "monthly"]

METHOD_NAMES: dict[str, str] = {"equal_payment": "等额本息", "equal_principal": "等额本金"}
CENT = Decimal("0.01")
_CTX = Context(prec=40)


def to_decimal(value: float | int | str | Decimal) -> Decimal:
    """A float as the decimal it prints as (0.1 → Decimal('0.1'), not its binary expansion)."""
    return value if isinstance(value, Decimal) else Decimal(str(value))


def cents(value: Decimal) -> float:
    """Round half-up to the cent and return a float (what JSON carries)."""
    return float(value.quantize(CENT, rounding=ROUND_HALF_UP))


@dataclass(slots=True)
class ScheduleRow:
    period: int  # month number, or year number for a yearly schedule
    payment: float
    principal: float
    interest: float
    remaining: float


@dataclass(slots=True)
class LoanResult:
    method: Method
    price: float
    down_payment_ratio: float
    down_payment: float
    loan_amount: float
    years: int
    months: int
    rate: float
    monthly_payment: float  # 等额本金: the first month
    first_month_payment: float
    last_month_payment: float
    monthly_decrease: float  # 等额本金: how much each month falls; 0 for 等额本息
    total_payment: float
    total_interest: float
    schedule: list[ScheduleRow] = field(default_factory=list)

    @property
    def method_name(self) -> str:
        return METHOD_NAMES[self.method]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["method_name"] = self.method_name
        return out


def annuity_payment(principal: Decimal, monthly_rate: Decimal, months: int) -> Decimal:
    """The exact (unrounded) 等额本息 monthly payment; zero rate → principal / months."""
    with localcontext(_CTX):
        growth = (1 + monthly_rate) ** months
        if monthly_rate == 0 or growth == 1:  # a rate too small to move (1 + r)^n off 1
            return principal / months
        return principal * monthly_rate * growth / (growth - 1)


def max_principal(monthly_payment: Decimal, monthly_rate: Decimal, months: int) -> Decimal:
    """The loan an (等额本息) monthly payment can carry: the inverse of :func:`annuity_payment`."""
    with localcontext(_CTX):
        growth = (1 + monthly_rate) ** months
        if monthly_rate == 0 or growth == 1:
            return monthly_payment * months
        return monthly_payment * (growth - 1) / (monthly_rate * growth)


def _rows(
    loan: Decimal, monthly_rate: Decimal, months: int, method: Method
) -> list[tuple[Decimal, Decimal, Decimal, Decimal]]:
    """Exact (payment, principal, interest, remaining) for every month."""
    rows = []
    remaining = loan
    with localcontext(_CTX):
        annuity = annuity_payment(loan, monthly_rate, months) if method == "equal_payment" else Decimal(0)
        fixed_principal = loan / months
        for _ in range(months):
            interest = remaining * monthly_rate
            if method == "equal_payment":
                principal = annuity - interest
                payment = annuity
            else:
                principal = fixed_principal
                payment = principal + interest
            remaining -= principal
            rows.append((payment, principal, interest, max(remaining, Decimal(0))))
    return rows


def _schedule(rows: list[tuple[Decimal, Decimal, Decimal, Decimal]], kind: ScheduleKind) -> list[ScheduleRow]:
    """Rows rounded by cumulative sums, so the cents of every column add up to the exact totals
    (the last row absorbs the rounding, as a bank's final instalment does)."""
    if kind == "none":
        return []
    step = 1 if kind == "monthly" else 12
    out = []
    loan = rows[0][1] + rows[0][3] if rows else Decimal(0)  # principal of month 1 + what remains
    done = [Decimal(0), Decimal(0), Decimal(0)]  # rounded cumulative payment, principal, interest
    cumulative = [Decimal(0), Decimal(0), Decimal(0)]
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        for col in range(3):
            cumulative[col] += sum((r[col] for r in chunk), Decimal(0))
        amounts = []
        for col in range(3):
            rounded = cumulative[col].quantize(CENT, rounding=ROUND_HALF_UP)
            amounts.append(rounded - done[col])
            done[col] = rounded
        remaining = loan.quantize(CENT, rounding=ROUND_HALF_UP) - done[1]
        payment, principal, interest = (float(a) for a in amounts)
        out.append(
            ScheduleRow(start // step + 1, payment, principal, interest, float(max(remaining, Decimal(0))))
        )
    return out


def compute_loan(
    *,
    price: float,
    down_payment_ratio: float,
    years: int,
    rate: float,
    method: Method = "equal_payment",
    schedule: ScheduleKind = "none",
) -> LoanResult:
    """Down payment, loan, monthly payment(s), totals and optionally a schedule.

    ``rate`` is the annual rate in percent (3.1 = 3.1 %); ``down_payment_ratio`` a fraction.
    """
    with localcontext(_CTX):
        # whole cents first, so down payment + loan = price and loan + interest = total exactly
        price_d = to_decimal(price).quantize(CENT, rounding=ROUND_HALF_UP)
        down = (price_d * to_decimal(down_payment_ratio)).quantize(CENT, rounding=ROUND_HALF_UP)
        loan = price_d - down
        months = int(years) * 12
        monthly_rate = to_decimal(rate) / 100 / 12
        if method == "equal_payment":
            first = last = annuity_payment(loan, monthly_rate, months)
            total = first * months
            decrease = Decimal(0)
        else:
            # one division per figure: the exact value is rational, and a sum of two rounded
            # quotients can land just below a half cent (743.37499… for 743.375)
            pct, per_month = to_decimal(rate), 1200 * months
            first = loan * (1200 + pct * months) / per_month
            last = loan * (1200 + pct) / per_month
            decrease = loan * pct / per_month
            total = loan + loan * pct * (months + 1) / 2400
        rows = _rows(loan, monthly_rate, months, method) if schedule != "none" else []
    return LoanResult(
        method=method,
        price=cents(price_d),
        down_payment_ratio=float(down_payment_ratio),
        down_payment=cents(down),
        loan_amount=cents(loan),
        years=int(years),
        months=months,
        rate=float(rate),
        monthly_payment=cents(first),
        first_month_payment=cents(first),
        last_month_payment=cents(last),
        monthly_decrease=cents(decrease),
        total_payment=cents(loan + to_decimal(cents(total - loan))),
        total_interest=cents(total - loan),
        schedule=_schedule(rows, schedule),
    )
