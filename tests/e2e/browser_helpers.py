"""Steps the browser tests share."""


def sign_in(page, email: str, password: str) -> None:
    page.goto("/login")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("button[type=submit]")
