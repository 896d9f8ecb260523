"""The web console's pages: Jinja2 templates (autoescaped), one stylesheet, one small script.
Everything is served from here: no CDN, no external asset."""

from __future__ import annotations

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>memdream · {{ scope }}</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"PingFang SC","Hiragino Sans GB","Microsoft YaHei","Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC","WenQuanYi Micro Hei","WenQuanYi Zen Hei",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6rem 1.2rem;display:flex;gap:1.2rem;align-items:center;flex-wrap:wrap}
header a{color:#cfd6e4;text-decoration:none}header a.on{color:#fff;font-weight:600;border-bottom:2px solid #7aa2ff}
header .scope{margin-left:auto;font-size:.85rem;color:#9aa6bd}
main{max-width:1100px;margin:1rem auto;padding:0 1.2rem}
table{border-collapse:collapse;width:100%;background:#fff;margin:.5rem 0 1.2rem}th,td{border-bottom:1px solid #e3e6ec;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f6;font-weight:600;font-size:.85rem}
.card{background:#fff;border:1px solid #e3e6ec;border-radius:6px;padding:.8rem 1rem;margin:.6rem 0}
.muted{color:#6b7588;font-size:.85rem}.id{font-family:ui-monospace,Menlo,Consolas,"Noto Sans Mono CJK SC",monospace;font-size:.8rem;color:#6b7588}
.trace{font-family:ui-monospace,Menlo,Consolas,"Noto Sans Mono CJK SC",monospace;font-size:.8rem;color:#3a5}
pre{white-space:pre-wrap;background:#fff;border:1px solid #e3e6ec;padding:.6rem;border-radius:6px;font-size:.85rem}
.del{color:#b42318}.add{color:#067647}
form.inline{display:inline}button{font:inherit;font-size:.8rem;padding:.1rem .5rem;border:1px solid #c5cbd6;background:#fff;border-radius:4px;cursor:pointer}
input[type=text],input[type=date],textarea{font:inherit;padding:.25rem .4rem;border:1px solid #c5cbd6;border-radius:4px}
#changed{display:none;background:#fff4e5;border:1px solid #f5b041;padding:.4rem .8rem;margin:.6rem 0;border-radius:6px}
.badge{font-size:.75rem;padding:0 .4rem;border-radius:8px;background:#eef1f6}
</style></head><body>
<header><strong>memdream</strong>
<a href="/" class="{{ 'on' if tab == 'overview' }}">Overview</a>
<a href="/entries" class="{{ 'on' if tab == 'entries' }}">Entries</a>
<a href="/dreams" class="{{ 'on' if tab == 'dreams' }}">Dream diary</a>
<a href="/conflicts" class="{{ 'on' if tab == 'conflicts' }}">Conflicts</a>
<a href="/knowledge" class="{{ 'on' if tab == 'knowledge' }}">Knowledge</a>
<span class="scope">scope {{ scope }}</span></header>
<main><div id="changed">The files changed on disk; reloading…</div>
{% block body %}{% endblock %}</main>
<script>
// A hand edit (or another program) changed the files: reload, unless a form is being filled in.
(function(){var gen={{ generation|tojson }},dirty=false;
document.addEventListener("input",function(){dirty=true});
setInterval(function(){fetch("/api/state",{credentials:"same-origin"}).then(function(r){return r.json()}).then(function(s){
if(s.generation!==gen){document.getElementById("changed").style.display="block";if(!dirty){location.reload()}}})},3000)})();
</script></body></html>"""

ENTRY_ACTIONS = """{% macro actions(e, version, back) %}
<form class="inline" method="post" action="/entry/{{ e.id }}/{{ 'unpin' if e.pinned else 'pin' }}"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="version" value="{{ version }}"><input type="hidden" name="back" value="{{ back }}"><button>{{ 'unpin' if e.pinned else 'pin' }}</button></form>
<form class="inline" method="post" action="/entry/{{ e.id }}/forget"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="version" value="{{ version }}"><input type="hidden" name="back" value="{{ back }}"><button>forget</button></form>
<details class="inline"><summary class="muted">edit</summary>
<form method="post" action="/entry/{{ e.id }}/edit"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="version" value="{{ version }}"><input type="hidden" name="back" value="{{ back }}">
<input type="text" name="text" value="{{ e.text }}" size="60" aria-label="new text for {{ e.id }}"> <button>save</button></form></details>
{% endmacro %}"""

TEMPLATES = {
    "base.html": BASE,
    "actions.html": ENTRY_ACTIONS,
    "overview.html": """{% extends "base.html" %}{% block body %}
<h1>Overview</h1>
<div class="card"><strong>Health.</strong>
{% if problems %}<span class="del">{{ problems|length }} problem(s) in the files:</span><ul>{% for p in problems[:10] %}<li>{{ p }}</li>{% endfor %}</ul>{% else %}every file parses and the index agrees with them.{% endif %}
Open conflicts: <a href="/conflicts">{{ conflicts }}</a>. Stale knowledge files (not verified for 30 days): {{ stale|length }}.</div>
<div class="card"><strong>Dreams.</strong>
{% if last %}Last dream {{ last.run }} at {{ last.at }}: {% for p, s in last.phases.items() %}{{ p }} {{ s }}{% if not loop.last %}, {% endif %}{% endfor %}.{% else %}No dream has changed anything yet.{% endif %}
Due now: {{ due|join(', ') if due else 'nothing' }}; the nightly run is at {{ nightly }}. <a href="/dreams">Diary</a></div>
<h2>Memories per scope, layer and type (currently valid)</h2>
<table><tr><th>scope</th><th>layer · type</th><th>count</th></tr>
{% for key, items, total in counts %}{% for (layer, type), n in items %}<tr><td>{{ key if loop.first }}</td><td>{{ layer }} · {{ type }}</td><td>{{ n }}</td></tr>{% endfor %}
<tr><td>{{ key if not items }}</td><td class="muted">total</td><td><strong>{{ total }}</strong></td></tr>{% endfor %}</table>
{% endblock %}""",
    "entries.html": """{% extends "base.html" %}{% from "actions.html" import actions with context %}{% block body %}
<h1>Entries</h1>
<form method="get" action="/entries"><input type="text" name="q" value="{{ q }}" placeholder="search (any language)" aria-label="search" size="40">
<button>search</button> <span class="muted">or browse:</span>
<a href="/entries?layer=resident">resident</a> · <a href="/entries?layer=recall">recall</a> · <a href="/entries?layer=archive">archive</a></form>
{% if warning %}<p class="muted">{{ warning }}</p>{% endif %}
{% if q %}<p class="muted">{{ hits|length }} memories recalled for “{{ q }}”, best first; score = relevance × lift from recency and importance.</p>
<table><tr><th>score</th><th>memory</th><th></th></tr>{% for h in hits %}<tr><td><strong>{{ '%.2f'|format(h.score) }}</strong><div class="trace">rel {{ '%.2f'|format(h.trace.relevance) }} &times; lift {{ '%.2f'|format(h.trace.lift) }} (rec {{ '%.2f'|format(h.trace.recency) }}, imp {{ '%.2f'|format(h.trace.importance) }})</div></td>
<td class="text">{{ h.entry.text }} <div class="id">{{ h.entry.id }} · {{ h.entry.effective_type }} · {{ h.entry.layer }}{% if h.entry.subject %} · <a href="/subject/{{ h.entry.subject|urlencode }}">{{ h.entry.subject }}</a>{% endif %}{% if h.entry.pinned %} · <span class="badge">pinned</span>{% endif %}</div></td>
<td>{{ actions(h.entry, versions[h.entry.id], path ~ '?q=' ~ (q|urlencode)) }}</td></tr>{% endfor %}</table>
{% else %}<p class="muted">{{ rows|length }} {{ layer or 'resident and recall' }} entries.</p>
<table><tr><th>memory</th><th></th></tr>{% for e, version in rows %}<tr><td class="text">{{ e.text }} <div class="id">{{ e.id }} · {{ e.effective_type }} · {{ e.layer }}{% if e.subject %} · <a href="/subject/{{ e.subject|urlencode }}">{{ e.subject }}</a>{% endif %}{% if e.pinned %} · <span class="badge">pinned</span>{% endif %}{% if e.valid_to %} · ended {{ e.valid_to.strftime('%Y-%m-%d') }}{% endif %}</div></td>
<td>{% if not e.valid_to and e.layer != 'archive' %}{{ actions(e, version, path ~ ('?layer=' ~ layer if layer else '')) }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% endblock %}""",
    "subject.html": """{% extends "base.html" %}{% block body %}
<h1>Subject: {{ name }}</h1>
<form method="get"><label>as of <input type="date" name="as_of" value="{{ as_of }}"></label> <button>show</button></form>
{% if as_of %}<div class="card">As of {{ as_of }}: <strong>{{ valid.text if valid else '(nothing valid then)' }}</strong></div>{% endif %}
<table><tr><th>valid from</th><th>valid to</th><th>memory</th></tr>{% for e in trail %}
<tr{% if valid and valid.id == e.id %} style="background:#eef6ff"{% endif %}><td>{{ e.valid_from.strftime('%Y-%m-%d %H:%M') if e.valid_from }}</td><td>{{ e.valid_to.strftime('%Y-%m-%d %H:%M') if e.valid_to else 'now' }}</td>
<td class="text">{{ e.text }} <div class="id">{{ e.id }}{% if e.supersedes %} · supersedes {{ e.supersedes }}{% endif %}{% if e.end %} · {{ e.end }}{% endif %}</div></td></tr>{% endfor %}</table>
{% endblock %}""",
    "dreams.html": """{% extends "base.html" %}{% block body %}
<h1>Dream diary</h1>
{% if last %}<form method="post" action="/dreams/undo" onsubmit="return confirm('Undo dream {{ last.run }}?')"><input type="hidden" name="csrf" value="{{ csrf }}">
<button id="undo">undo the last dream ({{ last.run }})</button></form>{% endif %}
{% for day, text in diaries %}<h2>{{ day }}</h2><pre class="diary">{{ text }}</pre>{% else %}<p class="muted">No dream has written its diary yet. Run <code>memdream dream</code>.</p>{% endfor %}
<h2>What each dream changed</h2>
{% for r in runs %}<details class="card"{% if loop.first %} open{% endif %}><summary>{{ r.run }} · {{ r.at }}{% if r.run in undone %} · <span class="badge">undone</span>{% endif %}</summary>
{% for path, ch in r.changes.items() %}<div class="id">{{ path }}</div><pre>{% for id, raw in ch.removed.items() %}<span class="del">- {{ raw }}</span>
{% endfor %}{% for id in ch.added %}<span class="add">+ {{ lines[(path, id)] }}</span>
{% endfor %}</pre>{% endfor %}</details>{% endfor %}
{% endblock %}""",
    "conflicts.html": """{% extends "base.html" %}{% block body %}
<h1>Conflict inbox</h1>
{% for c in conflicts %}<div class="card"><div class="id">{{ c.id }} · {{ c.kind }} · {{ c.day }} · {{ c.path }}</div>
<table><tr><th>a (older)</th><th>b (newer)</th></tr><tr><td class="text">{{ c.a }}<div class="id">{{ c.a_source or c.path }}</div></td><td class="text">{{ c.b }}<div class="id">{{ c.path }}</div></td></tr></table>
<form method="post" action="/conflicts/{{ c.id }}"><input type="hidden" name="csrf" value="{{ csrf }}">
<button name="keep" value="a">keep a</button> <button name="keep" value="b">keep b</button> <button name="keep" value="both">keep both</button>
<input type="text" name="text" placeholder="or write the right version" size="40" aria-label="corrected text"> <button name="keep" value="edit">save edit</button></form></div>
{% else %}<p>No open conflicts.</p>{% endfor %}
{% endblock %}""",
    "knowledge.html": """{% extends "base.html" %}{% block body %}
<h1>Knowledge</h1>
<h2>INDEX.md</h2>
<table><tr><th>file</th><th>category</th><th>priority</th><th>status</th><th>last verified</th></tr>{% for n in notes %}
<tr><td>{{ n.title }} <div class="id">{{ n.path }}</div></td><td>{{ n.category }}</td><td>{{ n.priority }}</td><td>{{ n.status }}</td><td>{{ n.last_verified or '' }}{% if n.stale %} <span class="badge">stale</span>{% endif %}</td></tr>
{% else %}<tr><td colspan="5" class="muted">no knowledge files yet</td></tr>{% endfor %}</table>
<h2>NOW.md</h2><pre>{{ now_text or '(empty)' }}</pre>
<h2>Daily logs</h2>{% for day, text in daily %}<details class="card"{% if loop.first %} open{% endif %}><summary>{{ day }}</summary><pre>{{ text }}</pre></details>{% else %}<p class="muted">no daily logs yet</p>{% endfor %}
{% endblock %}""",
    "message.html": """{% extends "base.html" %}{% block body %}
<h1>{{ title }}</h1><p>{{ text }}</p>{% if reload %}<p><a href="{{ reload }}">back to the page</a></p>
<script>setTimeout(function(){location.href={{ reload|tojson }}},2500)</script>{% endif %}
{% endblock %}""",
}
