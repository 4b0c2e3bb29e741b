from django.urls import path

from arena import views

app_name = "arena"
urlpatterns = [
    path("<int:project_id>/", views.arena_page, name="project"),
    path("b/<str:token>/", views.battle_page, name="battle"),
    path("b/<str:token>/stream", views.battle_stream, name="stream"),
    path("b/<str:token>/vote", views.battle_vote, name="vote"),
    path("b/<str:token>/continue", views.battle_continue, name="continue"),
    path("manage/new/", views.manage_create, name="manage_create"),
    path("manage/<int:project_id>/", views.manage_detail, name="manage_detail"),
    path("manage/<int:project_id>/battles.csv", views.manage_battles_csv, name="manage_battles_csv"),
    path("manage/battles/<int:battle_id>/exclude", views.battle_exclude, name="battle_exclude"),
]
