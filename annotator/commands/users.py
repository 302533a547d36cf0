"""``annotator users add|list|email|passwd|unlock|role|deactivate|activate|changes``: accounts, roles, the record of
changes."""

from __future__ import annotations

import getpass
import sys

from ..errors import InputError
from ..model import Role
from . import add_json_flag


def register(sub) -> None:
    """Add ``users add|list|email|passwd|unlock|role|deactivate|activate|changes`` to the CLI."""
    users = sub.add_parser("users", help="manage accounts: add, list, email, passwd, unlock, role, deactivate, "
                                         "activate, changes")
    inner = users.add_subparsers(dest="users_command", metavar="ACTION")

    p = inner.add_parser("add", help="create an account (asks for its password)")
    p.add_argument("name")
    p.add_argument("--role", required=True, choices=[r.value for r in Role])
    p.add_argument("--password-stdin", action="store_true", help="read the password from the first line of stdin")
    p.add_argument("--no-password", action="store_true",
                   help="create the account without a password (it cannot log in until `users passwd`)")
    p.add_argument("--email", metavar="ADDRESS", default=None,
                   help="the person's e-mail address (unique; Label Studio knows people by it)")
    add_json_flag(p)
    p.set_defaults(func=_add, creates_store=True)

    p = inner.add_parser("email", help="set an account's e-mail address (\"\" takes it away)")
    p.add_argument("name")
    p.add_argument("address", help="the address, unique regardless of case; \"\" for none")
    add_json_flag(p)
    p.set_defaults(func=_email)

    p = inner.add_parser("list", help="list accounts, their roles and log-in state")
    add_json_flag(p)
    p.set_defaults(func=_list)

    p = inner.add_parser("passwd", help="set a new password (also unlocks the account and ends its open sessions)")
    p.add_argument("name")
    p.add_argument("--password-stdin", action="store_true", help="read the password from the first line of stdin")
    add_json_flag(p)
    p.set_defaults(func=_passwd)

    p = inner.add_parser("unlock", help="clear failed log-ins and a lock")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=_unlock)

    p = inner.add_parser("role", help="change an account's role (ends its open sessions)")
    p.add_argument("name")
    p.add_argument("role", choices=[r.value for r in Role])
    add_json_flag(p)
    p.set_defaults(func=_role)

    p = inner.add_parser("deactivate", help="stop an account from logging in and end its open sessions "
                                            "(its judgements stay)")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=_active, active=False)

    p = inner.add_parser("activate", help="let a deactivated account log in again")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=_active, active=True)

    p = inner.add_parser("logout", help="end every open session of an account, in every browser (nothing else changes)")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=_logout)

    p = inner.add_parser("changes", help="the record of account changes: who changed which account, when, how")
    p.add_argument("--name", default=None, help="only the changes of this account")
    p.add_argument("--limit", type=int, default=100, help="newest N changes (default 100)")
    add_json_flag(p)
    p.set_defaults(func=_changes)

    users.set_defaults(func=lambda args, ctx: (users.print_help(), 1)[1])


def _read_password(args) -> str:
    """The new password from stdin (--password-stdin) or typed twice at a prompt."""
    if args.password_stdin:
        line = sys.stdin.readline()
        password = line.rstrip("\r\n")
        if not password:
            raise InputError("no password on stdin", "stdin", 1)
        return password
    if not sys.stdin.isatty():
        raise InputError("no terminal to ask for a password; use --password-stdin")
    first = getpass.getpass("Password: ")
    second = getpass.getpass("Password again: ")
    if first != second:
        raise InputError("the two passwords differ")
    return first


def _add(args, ctx) -> int:
    from ..accounts.auth import add_user
    password = None if args.no_password else _read_password(args)
    user = add_user(ctx.store(), args.name, args.role, password, email=args.email)
    ctx.emit({"name": user.name, "role": user.role.value, "can_log_in": password is not None, "email": user.email},
             f"created {user.role.value} {user.name!r}" + (f" <{user.email}>" if user.email else "")
             + ("" if password is not None else " (no password yet)"))
    return 0


def _email(args, ctx) -> int:
    from ..accounts.auth import set_email
    stored = set_email(ctx.store(), args.name, args.address)
    ctx.emit({"name": args.name, "email": stored},
             f"{args.name!r} has the e-mail address {stored}" if stored else f"{args.name!r} has no e-mail address")
    return 0


def _list(args, ctx) -> int:
    from ..accounts.auth import list_users
    rows = list_users(ctx.store())
    lines = [f"{u.name:<20} {u.role:<10} {'can log in' if u.can_log_in else 'no password'}"
             + (f", {u.email}" if u.email else "")
             + ("" if u.active else ", deactivated")
             + (f", {u.failed_logins} failed log-ins" if u.failed_logins else "")
             + (f", locked until {u.locked_until:%Y-%m-%d %H:%M} UTC" if u.locked_until else "") for u in rows]
    ctx.emit(rows, "\n".join(lines) or "no users")
    return 0


def _passwd(args, ctx) -> int:
    from ..accounts.auth import set_password
    set_password(ctx.store(), args.name, _read_password(args))
    ctx.emit({"name": args.name, "password": "changed"}, f"password of {args.name!r} changed")
    return 0


def _unlock(args, ctx) -> int:
    from ..accounts.auth import unlock
    unlock(ctx.store(), args.name)
    ctx.emit({"name": args.name, "unlocked": True}, f"{args.name!r} unlocked")
    return 0


def _role(args, ctx) -> int:
    from ..accounts.auth import set_role
    set_role(ctx.store(), args.name, args.role)
    ctx.emit({"name": args.name, "role": args.role}, f"{args.name!r} is now {args.role}")
    return 0


def _active(args, ctx) -> int:
    from ..accounts.auth import set_active
    set_active(ctx.store(), args.name, args.active)
    ctx.emit({"name": args.name, "active": args.active},
             f"{args.name!r} " + ("can log in again" if args.active else "is deactivated; its open sessions end"))
    return 0


def _logout(args, ctx) -> int:
    from ..accounts.auth import end_sessions
    ended = end_sessions(ctx.store(), args.name)
    ctx.emit({"name": args.name, "sessions_ended": ended},
             f"{args.name!r} is logged out everywhere ({ended} stored session{'s' if ended != 1 else ''} ended)")
    return 0


def _changes(args, ctx) -> int:
    from ..accounts.people import account_changes
    table = account_changes(ctx.store(), limit=args.limit, target=args.name)
    rows = table.to_dict(orient="records")
    ctx.emit(rows, "\n".join(f"{r['when (UTC)']}  {r['by']}  {r['action']}  {r['account']}"
                             + (f"  ({r['detail']})" if r["detail"] else "") for r in rows) or "no account changes")
    return 0
