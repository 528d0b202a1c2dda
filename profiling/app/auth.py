"""Who is using the app: Streamlit's OpenID Connect sign-in (st.login / st.user) mapped to a role, or the one local
user where no sign-in is configured.

Sign-in is configured by an `[auth]` table in .streamlit/secrets.toml (Streamlit's own format: redirect_uri,
cookie_secret, client_id, client_secret, server_metadata_url); roles by a `[gemmlens.roles]` table of e-mail
address or domain to role (profiling.team.roles.RolePolicy). The checks themselves are in the run store and the
GPU queue; this module only finds the identity and draws the sign-in screen.
"""

from __future__ import annotations

import threading

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling.app.text import md_escape
from profiling.errors import GemmLensError, first_line
from profiling.team.roles import Action, Identity, RolePolicy, local_identity

_this_run = threading.local()
"""The answer of `sign_in_gate` for the script run on this thread. Streamlit keeps a parsed secrets file, but where
there is none it looks for one again (an open per secrets path) on every call, and a run asks several times."""


def sign_in_configured() -> bool:
    """Whether secrets.toml has an `[auth]` table (then everyone signs in; otherwise one local user). Inside a run
    of the frame, the answer its sign-in gate found at the top of that run: a secrets file added or changed counts
    from the next run on."""
    known = getattr(_this_run, "configured", None)
    return _secrets_ask_for_sign_in() if known is None else known


def _secrets_ask_for_sign_in() -> bool:
    try:
        return st.secrets.load_if_toml_exists() and bool(st.secrets.get("auth"))
    except Exception:  # noqa: BLE001 - an unreadable secrets file means no sign-in, as Streamlit itself treats it
        return False


def role_policy() -> RolePolicy:
    """The `[gemmlens.roles]` table and `require_verified_email` of secrets.toml (InvalidInput naming a bad entry)."""
    section = st.secrets.get("gemmlens") or {}
    return RolePolicy.from_mapping(dict(section.get("roles") or {}), section.get("require_verified_email", False))


def current_identity() -> Identity | None:
    """The signed-in user with their role; the local user (admin) without sign-in; None when no one is signed in,
    or the one signed in has no role here."""
    if not sign_in_configured():
        return local_identity()
    if not st.user.is_logged_in:
        return None
    email = st.user.get("email")
    return role_policy().identity(
        str(email) if email else None, str(st.user.get("name") or ""), st.user.get("email_verified")
    )


def may(action: Action) -> bool:
    """Whether the current identity may do `action` (for showing a control; the store and queue check again)."""
    who = current_identity()
    return who is not None and who.may(action)


def sign_in_gate() -> Identity:
    """For the frame (app.py): without sign-in, the local user. With it, the sidebar names who is signed in and
    offers to sign out; someone not signed in (or without a role) sees only the sign-in screen (st.stop()).
    Looks the secrets up once for the run (`sign_in_configured` reads it until the next run's gate)."""
    _this_run.configured = None  # a thread may serve several runs: never the last run's answer
    configured = _secrets_ask_for_sign_in()
    if get_script_run_ctx() is not None:
        _this_run.configured = configured
    if not configured:
        return local_identity()
    if not st.user.is_logged_in:
        st.title("GEMM Lens")
        st.write("This GEMM Lens server is shared: sign in to see its runs and GPU queue.")
        if st.button("Sign in", type="primary"):
            st.login()
        st.stop()
    try:
        who = current_identity()
    except GemmLensError as exc:  # a bad roles table: say so, in one line
        st.error(md_escape(first_line(exc)))
        st.stop()
    if who is None:
        st.title("GEMM Lens")
        email = st.user.get("email")
        unverified = role_policy().unverified(str(email) if email else None, st.user.get("email_verified"))
        if unverified:
            st.warning(md_escape(unverified[0].upper() + unverified[1:]) + ".")
        else:
            st.warning(f"{md_escape(email or 'This account')} has no role on this server: ask an admin.")
        if st.button("Sign out"):
            st.logout()
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as {md_escape(who.label)} ({who.role})")
        if st.button("Sign out", key="sign_out"):
            st.logout()
    return who
