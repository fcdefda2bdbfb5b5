"""Readers of the public data sets more than one app is built from, one reader per format.

* :mod:`.lianjia` — Lianjia second-hand listings (``ErshoufangSpider_<city>.csv``): typed rows;
* :mod:`.statutes` — PRC statutes as LawRefBook markdown: a statute's articles under their headings.

A reader returns records; each app keeps only its own use of them (documents to index, tables).
"""
