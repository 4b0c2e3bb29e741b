from accounts.roles import user_roles


def roles(request) -> dict:
    found = user_roles(request.user)
    return {"user_roles": found}
