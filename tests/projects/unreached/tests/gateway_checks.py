from shop.gateway import reconcile


def check_reconcile():
    assert reconcile(1) is not None
