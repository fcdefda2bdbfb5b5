"""Chinese quantities, units and places: the one reader every app, the answer stage and the tools share.

* :mod:`.numerals` — 三千五, 二〇一九, 第十二条 (:func:`~.numerals.cn_to_int`), 两万五, 1.5亿,
  三点一 (:func:`~.numerals.read_number`), the 万/亿 scale;
* :mod:`.quantities` — money (万元, 亿, 元), areas (㎡, 平米, 平方米), ratios (两成, 30%);
* :mod:`.normalise` — a question's numerals and units in one written form (两三百万 → 200-300万);
* :mod:`.dates` — a calendar day as people write it (2026年1月15日, 2026/1/15, 20260115);
* :mod:`.gazetteer` and :mod:`.places` — cities, districts and 板块 of the packaged gazetteer;
* :mod:`.number_check` — whether every figure of a model's text comes from a tool or the user.

Import the module you need (``from zhiwen.chinese.numerals import read_number``): this package's
face imports nothing, so reading a date never loads ``cn2an`` or the gazetteer.
"""
