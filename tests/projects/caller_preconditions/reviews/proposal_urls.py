from django.urls import path

from . import proposal_views

# withdraw and shelve each have their own address; the shelved ones are listed elsewhere
urlpatterns = [
    path("proposal/<int:pk>/withdraw/", proposal_views.withdraw, name="withdraw"),
    path("proposal/<int:pk>/shelve/", proposal_views.shelve, name="shelve"),
    path("proposal/<int:pk>/act/", proposal_views.act),
]
