"""Identities, roles and the permission check that every write path calls.

Roles are set by the server's configuration (a mapping of e-mail address or domain to role, see RolePolicy):

- viewer: reads runs and uploads reports (to look at them, not to save them);
- runner: also runs GPU jobs, saves or imports runs and comments on runs and their launches;
- admin: also deletes and restores runs, purges the trash, reads the audit log and changes settings.

Without sign-in configured, GEMM Lens runs for one local user, who may do everything (local_identity).
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from profiling.errors import GemmLensError, InvalidInput

Role = Literal["viewer", "runner", "admin"]
Action = Literal["read", "upload", "run", "save", "comment", "delete", "purge", "audit", "settings"]
ROLES: Final[tuple[Role, ...]] = get_args(Role)

PERMISSIONS: Final[dict[Role, frozenset[Action]]] = {
    "viewer": frozenset({"read", "upload"}),
    "runner": frozenset({"read", "upload", "run", "save", "comment"}),
    "admin": frozenset(get_args(Action)),
}

_DOING: Final[dict[Action, str]] = {
    "read": "reading runs",
    "upload": "uploading reports",
    "run": "running GPU jobs",
    "save": "saving runs",
    "comment": "commenting on runs",
    "delete": "deleting or restoring runs",
    "purge": "purging the trash",
    "audit": "reading the audit log",
    "settings": "changing settings",
}

UNKNOWN_AUTHOR: Final = "unknown"
"""The author of runs saved before sign-in existed (the store's migration sets it where none was typed)."""


class PermissionDenied(GemmLensError):
    """The signed-in identity's role does not allow what was asked."""


@dataclass(frozen=True)
class Identity:
    """Who acts: `id` is the e-mail address of a signed-in user (the local user name without sign-in), and it is
    what the store records as author and in the audit log."""

    id: str
    role: Role
    name: str = ""
    signed_in: bool = False

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise InvalidInput("an identity needs a non-empty id (an e-mail address or a user name)")
        if self.role not in ROLES:
            raise InvalidInput(f"unknown role {self.role!r}; roles: {', '.join(ROLES)}")

    def may(self, action: Action) -> bool:
        """Whether this identity's role allows `action`."""
        return action in PERMISSIONS[self.role]

    @property
    def label(self) -> str:
        """How pages and the audit log name this identity: "Ann <ann@example.com>" or just the id."""
        return f"{self.name} <{self.id}>" if self.name and self.name != self.id else self.id


SERVER: Final = Identity("server", "runner", "GEMM Lens server")
"""The app itself, for the GPU probe it queues at start-up."""


def local_identity(author: str | None = None) -> Identity:
    """The one user of a server without sign-in, or of the command line: the OS user (or `author`), admin."""
    name = (author or "").strip()
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):  # no passwd entry (some containers)
            name = "local"
    return Identity(name[:200], "admin")


def require(actor: Identity, action: Action) -> None:
    """PermissionDenied, in one line naming the role that is needed, unless `actor` may do `action`."""
    if actor.may(action):
        return
    allowed = [r for r in ROLES if action in PERMISSIONS[r]]
    raise PermissionDenied(
        f"{actor.id} is a {actor.role}: {_DOING[action]} needs the {' or '.join(allowed)} role "
        "(an admin of this server sets roles)"
    )


def check_author(actor: Identity, author: str | None) -> str:
    """The author to record for a run that `actor` saves: always the actor. An author typed in that names
    someone else is refused (a run carries the identity that saved it, not a free-text name)."""
    given = (author or "").strip()
    if given and given not in (actor.id, actor.name):
        raise PermissionDenied(f"a run is saved under the identity that saves it: author {given!r} is not {actor.id}")
    return actor.id


def require_author_or_admin(actor: Identity, author: str, run_id: int) -> None:
    """PermissionDenied, in one line, unless `actor` may change the run `run_id` that `author` saved: its author
    (with a role that saves) or an admin."""
    require(actor, "save")
    if actor.role == "admin" or actor.id == author:
        return
    raise PermissionDenied(
        f"{actor.id} is a {actor.role}: only run {run_id}'s author ({author}) or an admin may change it"
    )


def claim_true(value: object) -> bool | None:
    """An ID token's boolean claim: True or False, also as the strings "true" and "false" (some providers, such as
    Amazon Cognito, send those); None where the claim is absent or neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


@dataclass(frozen=True)
class RolePolicy:
    """E-mail address or domain to role, from the server's configuration; `*` is everyone else.

    An exact address wins over its domain, and the domain over `*`. A signed-in user whom none of them names
    has no role, and sees only a message saying so.

    The address is trusted only when the provider vouches for it: a provider that sends the `email_verified`
    claim must send it true (an account whose unverified address is ann@example.com is not Ann). A provider that
    does not send the claim at all is trusted as it is, unless `require_verified` (`require_verified_email = true`
    in `[gemmlens]`) turns that into a refusal too (docs/team-store.md lists providers).
    """

    roles: Mapping[str, Role]
    require_verified: bool = False

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None, require_verified: object = False) -> RolePolicy:
        """Check a mapping such as the `[gemmlens.roles]` table of secrets.toml: keys are addresses
        (ann@example.com), domains (example.com or @example.com) or `*`; values are role names. `require_verified`
        is `[gemmlens] require_verified_email` (true or false)."""
        if not isinstance(require_verified, bool):
            raise InvalidInput(f"require_verified_email must be true or false, not {require_verified!r}")
        clean: dict[str, Role] = {}
        for key, role in (mapping or {}).items():
            who = str(key).strip().lower().removeprefix("@")
            if not who:
                raise InvalidInput("an empty key in the roles table; use an address, a domain or *")
            if role not in ROLES:
                raise InvalidInput(f"roles table: {key} = {role!r} is not a role; roles: {', '.join(ROLES)}")
            clean[who] = role
        return cls(clean, require_verified)

    def role_for(self, email: str | None) -> Role | None:
        """The role of the user with this address (None: no role on this server)."""
        address = (email or "").strip().lower()
        if "@" in address and address in self.roles:
            return self.roles[address]
        domain = address.rpartition("@")[2]
        if domain and domain in self.roles:
            return self.roles[domain]
        return self.roles.get("*")

    def unverified(self, email: str | None, email_verified: object = None) -> str | None:
        """Why the signed-in address cannot be trusted (one line for the sign-in screen), or None where it can:
        `email_verified` is the ID token's claim (None where the provider sent none)."""
        who = (email or "").strip() or "this account"
        verified = claim_true(email_verified)
        if verified is True:
            return None
        if verified is False or email_verified is not None:
            return (
                f"the sign-in provider has not verified the address {who} (email_verified is {email_verified!r}): "
                "verify it with the provider, then sign in again"
            )
        if self.require_verified:
            return (
                f"the sign-in provider did not say whether {who} is verified (no email_verified claim), and this "
                "server requires it (require_verified_email): ask an admin"
            )
        return None

    def identity(self, email: str | None, name: str | None = None, email_verified: object = None) -> Identity | None:
        """The signed-in user's identity, or None when the address is not verified (unverified) or the policy gives
        it no role."""
        role = self.role_for(email)
        if role is None or not (email or "").strip() or self.unverified(email, email_verified):
            return None
        return Identity((email or "").strip().lower()[:200], role, (name or "").strip(), signed_in=True)
