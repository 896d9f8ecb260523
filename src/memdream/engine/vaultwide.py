"""Operations on the whole vault rather than one scope: rebuilding and syncing the index of
every scope, `memdream doctor` (with `--fix`), and the commented memdream.toml."""

from __future__ import annotations

from memdream.core import Core
from memdream.doctor import Problem, check_vault, remove_temp_files, restore_acknowledged
from memdream.index.raw import sync_raw


def write_config_template(core: Core) -> bool:
    """Write the commented memdream.toml into the vault if it has none; True when written."""
    from memdream.config import CONFIG_TEMPLATE

    if core.vault.config_path.exists():
        return False
    core.vault.config_path.write_text(CONFIG_TEMPLATE, encoding="utf-8")
    return True


def rebuild_index(core: Core) -> int:
    """Delete the index and build it again from every scope's files, transcripts too; returns the entries indexed."""
    n = core.index.rebuild(core.vault.scopes())
    for scope in core.vault.scopes():
        sync_raw(core.index, scope)
    return n


def sync_all(core: Core) -> int:
    """Catch the index up with hand edits in every scope; returns the files re-read."""
    return sum(core.index.sync_scope(s) for s in core.vault.scopes())


def doctor(core: Core, fix: bool = False) -> tuple[list[str], list[str], list[str], list[Problem]]:
    """Every file parses and the index agrees with the files; with `fix`, first the temp files
    interrupted writes left are deleted and acknowledged memories no file holds are put back.
    Returns (temp files removed, restored, not restored, problems)."""
    removed = remove_temp_files(core.vault, core.writer) if fix else []
    restored, unrestored = restore_acknowledged(core.vault, core.writer) if fix else ([], [])
    return removed, restored, unrestored, check_vault(core.vault, core.index)


def scope_problems(core: Core) -> list[Problem]:
    """The doctor's checks of this scope only."""
    return check_vault(core.vault, core.index, scopes=[core.scope])
