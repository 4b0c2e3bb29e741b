from django.urls import path

from arena import api

urlpatterns = [
    path(
        "arena/projects/<int:project_id>/battles", api.BattleStartApi.as_view(), name="api-arena-battle-start"
    ),
    path("arena/battles/<str:token>", api.BattleDetailApi.as_view(), name="api-arena-battle-detail"),
    path(
        "arena/battles/<str:token>/turns", api.BattleContinueApi.as_view(), name="api-arena-battle-continue"
    ),
    path("arena/battles/<str:token>/vote", api.BattleVoteApi.as_view(), name="api-arena-battle-vote"),
    path(
        "arena/projects/<int:project_id>/leaderboard-rows",
        api.BattleRowsApi.as_view(),
        name="api-arena-battle-rows",
    ),
]
