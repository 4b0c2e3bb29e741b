from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("people/", views.people, name="people"),
    path("people/<int:user_id>/active", views.person_active, name="person_active"),
    path("people/<int:user_id>/password-reset", views.person_password_reset, name="person_password_reset"),
    path("account/", views.account, name="account"),
    path("account/token", views.account_token_create, name="account_token_create"),
    path("account/token/revoke", views.account_token_revoke, name="account_token_revoke"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/reset/done/", views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
]
