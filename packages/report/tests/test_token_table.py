"""report.html's Tokens table: results.json's ``tokens`` ledger, a row per stage, the judge and
the total; a run without a ledger (an older abduct's) shows none."""

from __future__ import annotations

from abduct_report.report_page import token_table


def test_the_ledger_is_a_table_of_stages_the_judge_and_the_total() -> None:
    counts = {"requests": 1200, "cached": 3, "prompt": 45678, "completion": 90, "reasoning": 7}
    judge = {"requests": 2, "cached": 0, "prompt": 10, "completion": 4, "reasoning": 0}
    shown = "".join(token_table({"tokens": {"stages": {"triplet": counts}, "judge": judge, "total": counts}}))
    assert "<h2>Tokens</h2>" in shown
    assert "<td>stage triplet</td><td>1,200</td><td>3</td><td>45,678</td><td>90</td><td>7</td>" in shown
    assert "<td>judge</td><td>2</td><td>0</td><td>10</td><td>4</td><td>0</td>" in shown
    assert shown.count("<td>total</td>") == 1
    assert token_table({"metrics": {}}) == []
