from django.urls import path

from analytics import views

app_name = "analytics"
urlpatterns = [
    path("", views.project_list, name="list"),
    path("projects/<int:project_id>/", views.project_dashboard, name="project"),
    path("projects/<int:project_id>/judge-lab/", views.judge_lab, name="judge-lab"),
    path("projects/<int:project_id>/retry", views.report_retry, name="retry"),
    path("projects/<int:project_id>/cancel", views.report_cancel, name="cancel"),
    path("projects/<int:project_id>/<slug:section>/<slug:table>.csv", views.section_csv, name="csv"),
    path("arena/<int:project_id>/leaderboard/", views.arena_leaderboard, name="leaderboard"),
]
