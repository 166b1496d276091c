"""Opening the page's ?token= link once is enough: the cookie it sets outlives the browser session."""

from __future__ import annotations

from http.cookies import SimpleCookie
from pathlib import Path

from firmware_py.web.security import TOKEN_COOKIE, TOKEN_COOKIE_MAX_AGE_S
from tests.test_web_page import open_rig


async def test_the_token_link_sets_a_cookie_kept_across_browser_restarts(tmp_path: Path) -> None:
    made, _app = await open_rig(tmp_path, token="kitchen-secret", host="0.0.0.0")
    try:
        link = await made.client.get("/", params={"token": "kitchen-secret"})
        assert link.status_code == 303
        cookie = SimpleCookie()
        cookie.load(link.headers["set-cookie"])
        morsel = cookie[TOKEN_COOKIE]
        # A session cookie (no Max-Age, no Expires) is gone when the browser closes, and the docs
        # say the link is opened once.
        assert int(morsel["max-age"]) == TOKEN_COOKIE_MAX_AGE_S >= 365 * 24 * 3600
        assert morsel["httponly"] and morsel["samesite"].lower() == "strict"
    finally:
        await made.close()
