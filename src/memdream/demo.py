"""`memdream demo`: the life of the 所在地 memory, on a throwaway vault, with no model and no network.

The clock is simulated so the story spans weeks in a second; everything else is the real
code path (files, writer, index).
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import click

from memdream.clock import FrozenClock
from memdream.errors import SecretRefused
from memdream.memory import Memory, Scope, load_config

CST = timezone(timedelta(hours=8), "CST")


def _title(text: str) -> None:
    click.echo()
    click.secho(f"── {text} ", bold=True)


def _show_file(mem: Memory, path: Path) -> None:
    click.secho(f"$ cat {mem.vault.relpath(path)}", fg="cyan")
    for line in path.read_text(encoding="utf-8").splitlines():
        click.echo(f"  {line}")


def _team_act(root: Path, clock: FrozenClock) -> None:
    """The team server: this vault pushed into a throwaway PostgreSQL (a Unix socket in a
    temporary folder, no network), two server processes' handles on it, tokens, and the
    export that gives the vault back byte for byte."""
    _title("The team server: the same memory in PostgreSQL, for many processes and machines")
    from memdream.team import create_token, export_vault, open_store, push_vault, scope_files_of, scope_handle, throwaway_cluster, token_scope

    pg, why = throwaway_cluster()
    if pg is None:
        click.echo(f"(skipped: {why})")
        return
    stores = []
    try:
        url = pg.new_database("memdream_demo")
        click.echo("(a throwaway PostgreSQL cluster on a Unix socket, started for this act)")
        for _ in range(2):
            stores.append(open_store(url, load_config(pg.dir / "settings", env={}), clock=clock, cache_dir=pg.dir))
        a, b = stores
        me = Scope("me", "main")
        moved = push_vault(a, root)
        click.echo(f"memdream push VAULT --store ...  ->  {len(moved.scopes)} scope(s), {moved.files} files, {moved.bytes:,} bytes")
        back = pg.dir / "exported"
        export_vault(a, back, me)
        same = scope_files_of(back, me) == scope_files_of(root, me)
        click.echo(f"memdream export --store ... --to DIR  ->  {'the same files, byte for byte' if same else 'DIFFERENT files'}")
        out = scope_handle(a, "me", "main").write("团队服务器上线了：周一起所有 Agent 共用记忆")
        hits = scope_handle(b, "me", "main").recall("团队服务器", k=1)
        click.echo(f"server process A: remember  ->  {out.action} {out.entry.id}; process B at once: recall 团队服务器  ->  {hits[0].text if hits else '(nothing)'}")
        token = create_token(a, Scope("alice", "main"))
        who = token_scope(b, token)
        click.echo(f"memdream token create --user alice  ->  mdt_...; a request's scope comes from its token: {who.user}/{who.agent}")
        click.echo(f'alice\'s token: recall 团队服务器  ->  {len(scope_handle(b, who.user, who.agent).recall("团队服务器"))} hits (scopes never see each other)')
    finally:
        for s in stores:
            s.close()
        pg.stop()


def run_demo(keep: str | None = None) -> None:
    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="memdream-demo-"))
    clock = FrozenClock(datetime(2026, 6, 1, 9, 0, tzinfo=CST))
    mem = Memory(load_config(root, "me", "main", env={}), clock)
    mem.vault.init()
    try:
        click.secho("memdream demo: one memory's life, in plain Markdown", bold=True)
        click.echo(f"(a throwaway vault at {root}; no model, no network)")

        _title("1. 2026-06-01: you mention where you are")
        out = mem.write("我在余杭区")
        click.echo(f'remember "我在余杭区"  ->  {out.action} {out.entry.id}, subject {out.entry.subject!r} (read off the sentence)')

        clock.set(datetime(2026, 6, 20, 18, 30, tzinfo=CST))
        _title("2. 2026-06-20: a trip to 西湖区")
        out = mem.write("我在西湖区")
        click.echo(f'remember "我在西湖区"  ->  {out.action} {out.entry.id}; the old line is stamped, not deleted:')
        for old in out.superseded:
            click.echo(f"   {old.id} {old.text} valid until {old.valid_to:%Y-%m-%d %H:%M}")

        clock.set(datetime(2026, 6, 27, 10, 0, tzinfo=CST))
        _title("3. 2026-06-27: back in 余杭区")
        out = mem.write("我在余杭区")
        click.echo(f'remember "我在余杭区"  ->  {out.action} {out.entry.id} (a move back supersedes again)')

        _title("The file: one line per memory, metadata hidden in an HTML comment")
        _show_file(mem, mem.vault.recall_file_for(mem.scope, clock.now()))

        _title("history 所在地: the whole trail, with validity windows")
        for e in mem.history("所在地"):
            end = f"{e.valid_to:%Y-%m-%d %H:%M}" if e.valid_to else "now             "
            sup = f"  (supersedes {e.supersedes})" if e.supersedes else ""
            click.echo(f"  {e.valid_from:%Y-%m-%d %H:%M} → {end}  {e.text}{sup}")

        _title("as-of: where was I on a given day? (valid-time query over the trail)")
        for day in ("2026-06-01", "2026-06-21"):
            hit = mem.recall("所在地", k=1, as_of=day)
            click.echo(f"  recall 所在地 --as-of {day}  ->  {hit[0].text if hit else '(nothing)'}")
        click.echo(f"  recall 所在地 (now)               ->  {mem.recall('所在地', k=1)[0].text}")

        _title("Recall: relevance first, lifted by recency and importance, and it shows why")
        clock.set(datetime(2026, 4, 28, 11, 0, tzinfo=CST))
        mem.write("千万记得给那个老接口加超时兜底，它偶尔会抽风")
        places = ("莫干山", "西湖", "千岛湖", "黄山", "天目山")
        things = ("机械键盘", "显示器", "耳机", "台灯", "跑鞋")
        for i in range(40):  # a month of fresh trivia, each with a number
            clock.set(datetime(2026, 5, 28, 9, 0, tzinfo=CST) + timedelta(hours=18 * i))
            mem.write(f"上周换了新的{things[i % 5]}，花了 {300 + 37 * i} 块" if i % 2 else f"周末去爬了{places[i % 5]}，走了 {5 + i % 17} 公里")
        mem.write("新的支付接口文档放在团队 wiki 上")
        clock.set(datetime(2026, 6, 27, 10, 5, tzinfo=CST))
        query = "我们要接入一个新的支付接口，要注意什么？"
        click.echo(f'  recall "{query}" --explain')
        hits = mem.recall(query, k=10)
        for h in hits[:4]:
            t = h.trace
            click.echo(f"  {h.score:4.2f}  {h.text}")
            click.echo(
                f"        relevance {t.relevance:.2f} x lift {t.lift:.2f}"
                f" (recency {t.recency:.2f}, age {t.age_days:.0f} d; importance {t.importance:.2f} = prior {t.prior:.1f} + salience {t.salience:.1f})"
            )
        rank = next((i for i, h in enumerate(hits, 1) if h.text.startswith("千万")), None)
        click.echo(
            f"  The 60-day-old warning ranks #{rank}: it shares 接口 with the question, and 千万 and its type lift it."
            " Forty newer lines share only 新 and barely match: recency and importance reorder memories that"
            " match about equally well, they never lift one that barely matches above one that matches well."
        )
        past_q = "我之前说过哪个接口会抽风？"
        h = mem.recall(past_q, k=1)[0]
        click.echo(
            f'  A question about the past ({past_q}) is not lifted by recency: what happened stays true.'
            f"  ->  {h.text}  (recency {h.trace.recency:.2f} not counted, lift {h.trace.lift:.2f} from importance alone)"
        )
        for line in ("接口评审会改到了周四", "周五下午有组会", "我喜欢喝龙井茶"):
            mem.write(line)
        click.echo(f"  A one-character query finds the words that hold it:  recall 茶  ->  {mem.recall('茶', k=1)[0].text}")
        for line in ("Looking at a standing desk", "Bought a standing desk for the home office last week"):
            mem.write(line)
        bought = mem.recall("which desk did I buy?", k=1)[0]
        click.echo(
            f'  An English verb meets its other forms (bought is buy, don\'t is "do not"):  recall "which desk did I buy?"  ->  {bought.text}'
        )
        asked = mem.write("周五的团建定在哪儿了？").entry
        clock.set(clock.now() + timedelta(seconds=40))
        mem.write("定在良渚的农家乐，周五早上九点出发")
        clock.set(clock.now() + timedelta(minutes=5))
        query = "周五团建在哪儿"
        found = mem.recall(query, k=2)
        reply = next((h for h in found if h.trace.near == asked.id), None)
        question = next((h for h in found if h.entry.id == asked.id), None)
        if reply is not None:
            click.echo(
                f'  The answer to a question is said after it:  recall "{query}"  ->  {reply.text}'
                f"  (relevance {reply.trace.relevance:.2f}: said next to {asked.id}, which matched; on its own {reply.trace.bm25:.2f})"
            )
        if question is not None and question.trace.asked is not None:
            click.echo(
                f"  The question itself holds no answer: {question.text}  (relevance {question.trace.relevance:.2f},"
                f" half of its match {question.trace.asked:.2f}: it ends asking)"
            )

        _title("Credentials never enter memory")
        for secret in ("我的邮箱密码是 Tr0ub4dor&3x", "my OpenAI key is sk-proj-4f9KqZ2mN8xVt7LbR1cW3yHd6JpE0sAa"):
            try:
                mem.write(secret)
                click.echo(f"  stored?! {secret}")
            except SecretRefused as exc:
                click.echo(f'  remember "{secret[:18]}…"  ->  {exc.message}')

        _title("Saying it twice does not make two memories")
        clock.set(datetime(2026, 6, 28, 9, 0, tzinfo=CST))
        first = mem.write("以后都用中文回我")
        clock.advance(hours=3)
        again = mem.write("以后都用中文回我。")
        click.echo(f'remember "以后都用中文回我"   ->  {first.action} {first.entry.id} ({first.entry.effective_type}, {first.entry.layer} layer)')
        click.echo(f'remember "以后都用中文回我。" ->  {again.action}: already known as {again.entry.id}, confidence refreshed to {again.entry.confidence}')
        _show_file(mem, mem.vault.resident_file(mem.scope))
        click.echo("Looking alike is not enough: the same words as a question, or in a message by someone else, are another memory.")
        for text in ("Tom: I love hiking in the Alps!", "Anna: I love hiking in the Alps!", "小王明天去北京", "小王明天去北京吗？"):
            clock.advance(minutes=1)
            out = mem.write(text)
            click.echo(f'remember "{text}"  ->  {out.action} {out.entry.id}')
        click.echo("Looking alike the other way: the same words with the numbers swapped, or a negation, say another thing. Never folded, never silently added: the conflict inbox holds both sides.")
        for first, second in (("Alice owes me 500 and Bob 300", "Alice owes me 300 and Bob 500"), ("这周六我们不加班", "这周六我们加班")):
            clock.advance(minutes=1)
            mem.write(first)
            clock.advance(minutes=1)
            out = mem.write(second)
            against = out.contradicts
            click.echo(f'remember "{first}", then "{second}"  ->  {out.action} {out.entry.id}' + (f", in conflict with {against.id}" if against else ""))
        entry_conflicts = [c for c in mem.conflicts() if c.kind == "entry"]
        for c in entry_conflicts:
            click.echo(f"conflicts  ->  {c.id}: a “{c.a}”  vs  b “{c.b}”")
        settled = mem.resolve(entry_conflicts[-1].id, "b")
        click.echo(f"resolve {settled.id} --keep b  ->  “{settled.b}” stays; “{settled.a}” ends (superseded, its line kept)")
        _title("The knowledge vault: daily log, knowledge files that read before they write, INDEX.md")
        clock.set(datetime(2026, 6, 28, 14, 30, tzinfo=CST))
        path, heading = mem.log("完成了数据库迁移", "PostgreSQL 14 -> 16，耗时 45 分钟，无数据丢失。")
        click.echo(f'log "完成了数据库迁移"  ->  {mem.vault.relpath(path)}: {heading}')
        for text in ("部署前先备份数据库，再升级。", "部署前先备份数据库和配置文件，再升级。", "部署前不用备份数据库，直接升级。"):
            out = mem.note("lessons", "deploy", text, priority="🔴")
            click.echo(f'note add lessons deploy "{text}"  ->  {out.kind}')
        c = mem.conflicts()[0]
        click.echo(f"conflicts  ->  {c.id}: a “{c.a}”  vs  b “{c.b}”")
        mem.resolve(c.id, "a")
        click.echo(f"resolve {c.id} --keep a  ->  status active again; the rejected text stays, marked superseded")
        _show_file(mem, mem.vault.memory_dir(mem.scope) / "lessons" / "deploy.md")
        index = mem.vault.knowledge_index_file(mem.scope).read_text(encoding="utf-8")
        row = next(line for line in index.splitlines() if "[[deploy]]" in line)
        click.echo(f"INDEX.md row: {row}")
        click.echo(f"lookup deploy  ->  answered by {mem.lookup('deploy').level}")

        _title("A night's dream: the light phase tidies up, the diary says what it did")
        clock.set(datetime(2026, 7, 5, 22, 0, tzinfo=CST))
        with open(mem.vault.recall_file_for(mem.scope, datetime(2026, 6, 26, tzinfo=CST)), "a", encoding="utf-8") as fh:
            fh.write("- 接口评审会改到了周四！\n")  # typed by hand: a near-duplicate of an existing line
        click.echo('(you typed "- 接口评审会改到了周四！" into the recall file by hand, and asked about the Friday meeting three times)')
        mem.hit_flush_after = 1
        for _ in range(3):
            mem.recall("周五有什么会", k=1)
        clock.set(datetime(2026, 7, 6, 3, 0, tzinfo=CST))
        report = mem.dream()
        for p in report.phases:
            if p.status != "skipped" or p.phase == "deep":
                click.echo(f"  dream {p.phase if p.status != 'skipped' else 'deep, distill, replay, profile'}: {p.status}, {p.message}")
        _show_file(mem, mem.vault.root / report.diary)
        undone = mem.undo()
        click.echo(f"undo  ->  dream {undone['undone']} reverted by {undone['how']}; every line is back where it was")
        again = mem.dream(["light"])
        click.echo(f"dream --phase light  ->  {again.phases[0].status}, {again.phases[0].message} (and it stays: `git diff` shows the moves in a git vault)")

        _title("Bring your memories along: a Claude Code memory folder")
        folder = root / "claude-memory"
        folder.mkdir()
        (folder / "MEMORY.md").write_text(
            "# Memory Index\n\n- [User profile](user.md) — who the user is\n- The repo uses pnpm, not npm\n- 以后都用中文回我\n",
            encoding="utf-8",
        )
        (folder / "user.md").write_text("---\nname: user\ntype: user\n---\n\nThe user writes Go and reviews code at night.\n\nOur CI token is ghp_4f9KqZ2mN8xVt7LbR1cW3yHd6JpE0sAaXy12\n", encoding="utf-8")
        report = mem.import_folder("claude-code", folder)
        click.echo(f"import --from claude-code  ->  {len(report.added)} added, {report.known} already known, {len(report.refused)} refused")
        for where, why in report.refused:
            click.echo(f"   refused {where}: {why}")

        try:
            import asyncio

            from mcp.client import Client

            from memdream.mcp.server import build_server
        except ImportError:
            click.echo("\n(the MCP act needs the 'mcp' extra: .venv/bin/pip install -e '.[mcp]' in the memdream clone)")
        else:
            _title("An agent over MCP (memdream serve): the same memory, as tools")

            async def agent() -> None:
                async with Client(build_server(mem)) as c:
                    names = [t.name for t in (await c.list_tools()).tools]
                    click.echo(f"tools: {', '.join(names)}")
                    res = await c.call_tool("recall", {"query": "用什么语言回复我", "k": 1})
                    hit = __import__("json").loads(res.content[0].text)["hits"]
                    click.echo(f'recall "用什么语言回复我"  ->  {hit[0]["text"] if hit else "(nothing)"}')
                    res = await c.call_tool("remember", {"text": "my password is hunter2hunter2"})
                    click.echo(f"remember a password  ->  error: {res.content[0].text.split(': ', 1)[-1][:60]}…")

            import logging

            logging.getLogger("mcp").setLevel(logging.CRITICAL)  # the SDK logs each refused call; the demo prints it
            asyncio.run(agent())

        _title("A hand edit gone wrong: doctor names the line, nothing else breaks")
        resident = mem.vault.resident_file(mem.scope)
        typo = "- 周五下午有组会 <!--m:id=zz1;hc=many-->"  # a count typed by hand as a word
        resident.write_text(resident.read_text(encoding="utf-8") + typo + "\n", encoding="utf-8")
        click.echo(f"(appended by hand to {mem.vault.relpath(resident)}: {typo})")
        for problem in mem.doctor()[3]:
            click.echo(f"memdream doctor  ->  {problem}")
        hits = mem.recall("组会", k=1)
        click.echo(f'recall "组会"  ->  {hits[0].text if hits else "(nothing)"} (the line still reads; fix the value and doctor is quiet)')

        _team_act(root, clock)

        click.echo()
        click.echo("Edit these files by hand any time: the next memdream command sees the change.")
    finally:
        mem.close()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
