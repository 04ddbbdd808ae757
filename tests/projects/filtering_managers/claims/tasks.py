from claims.models import OpenClaim


def settle(pk):
    OpenClaim.objects.filter(pk=pk).update(state="settled")  # ok: IDM103 OpenClaimManager finds open claims only
