"""The allocator tuning is applied by default and can be switched off."""

from minimodel.training import runtime


def test_tune_allocator_opt_out(monkeypatch):
    monkeypatch.setenv("MINIMODEL_TUNE_MALLOC", "0")
    assert runtime.tune_allocator() is False
    monkeypatch.delenv("MINIMODEL_TUNE_MALLOC")
    assert runtime.tune_allocator() is True  # glibc Linux: mallopt accepted every setting
