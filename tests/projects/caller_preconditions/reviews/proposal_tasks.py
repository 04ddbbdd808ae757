from reviews.proposals import Proposal


def lapse_stale(pk):
    Proposal.objects.get(pk=pk).let_lapse()
