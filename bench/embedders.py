"""Benchmark: which local embedder, and how to fuse it with BM25, for memdream's recall.

    python bench/embedders.py [--quick] [--data ../shared/bench/locomo/locomo10.json]
                              [--embedders use,e5,static,minilm,hash] [--report FILE] [--no-cache]

Needs numpy, bm25s and PyStemmer, plus the embedder packages to measure (those missing
are listed and skipped). Each embedder runs in its own subprocess (clean load time and
peak memory), pinned to one thread; embeddings are cached in bench/out/embcache/.

Measured per embedder:
- speed: load time (import + model load, fresh process), ms per document (one batch of 256
  LoCoMo turns; one batch of the 390 short facts of the Chinese set), ms per single query
  (median and p90 of 100 single-text calls), peak RSS;
- LoCoMo (categories 1-4, one memory "{speaker}: {text}" per turn, retrieval within each
  conversation): turn recall@5/@10 and session recall@5 for dense cosine, BM25 (bm25s over
  memdream's tokens; also date-prefixed turns, and bm25s' own English tokenizer for
  reference), 0.7*cosine + 0.3*minmax(BM25), RRF (k=60), and grids of blend weights,
  weighted RRF and a "capped" blend (BM25 scaled by max(best BM25, tau * the query's
  attainable BM25) instead of its best alone, so weak accidental keyword matches are not
  stretched to 1), tuned on conversations 0-4 and reported on 5-9 (held out) and on all;
  "jointly" tuned settings also use the even-numbered questions of the Chinese set;
- Chinese: 60 Chinese facts with a paraphrased Chinese question each, 15 Chinese questions
  about English facts and 15 English questions about Chinese facts, among 300 distractor
  facts (all built below, deterministic): recall@1/@5.

``--quick`` uses 2 LoCoMo conversations (tune on the first, report on the second).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

# one thread everywhere, before numpy or any runtime loads
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402

REPORT_START = "<!-- bench:embedders:start -->"
REPORT_END = "<!-- bench:embedders:end -->"
CACHE_DIR = HERE / "out" / "embcache"
ALL_EMBEDDERS = ("use", "e5", "static", "minilm", "hash")
RRF_K = 60
BLEND_W = 0.7
GRID_W = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0]
GRID_RRF_K = [10, 30, 60]
GRID_TAU = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
TIMING_DOCS = 256
TIMING_QUERIES = 100

# ---- the Chinese set ----------------------------------------------------------------------
# (fact, paraphrased question): Chinese fact, Chinese question with different wording
ZH_PAIRS: list[tuple[str, str]] = [
    ("我对花生过敏", "我吃坚果会有什么问题"),
    ("我女儿叫小雨，今年上三年级", "我家闺女在读小学的哪个阶段"),
    ("我每天早上六点起床跑步", "我一般几点开始晨练"),
    ("我开的是一辆白色的特斯拉", "我平时驾驶什么牌子的汽车"),
    ("我不吃香菜", "哪种调味的菜叶是我讨厌的"),
    ("我住在杭州西湖区", "我家在哪座城市"),
    ("我养了一只橘猫，叫胖虎", "我的宠物叫什么名字"),
    ("我在一家银行做风控", "我从事什么职业"),
    ("我老婆是小学语文老师", "我妻子的工作是什么"),
    ("我是O型血", "献血时我属于哪一种"),
    ("我有高血压，每天吃降压药", "我有什么慢性病需要长期服药"),
    ("我近视六百度", "我的视力怎么样"),
    ("我最喜欢的歌手是周杰伦", "我偏爱哪位音乐人"),
    ("我大学读的是浙江大学计算机系", "我毕业于哪所高校，学的什么专业"),
    ("我下个月去日本旅游", "接下来我要出国去哪里玩"),
    ("我晚上睡觉会打呼噜", "我夜里休息时有什么毛病"),
    ("我喝咖啡会心慌", "为什么我不能碰提神饮料"),
    ("我妈妈的生日是三月十二号", "母亲哪天过寿"),
    ("我不会游泳", "去海边我能下水玩吗"),
    ("我的护照快过期了", "出国证件还有效吗"),
    ("我在学弹钢琴", "我最近在练什么乐器"),
    ("我怕狗", "我害怕哪种动物"),
    ("我每周三晚上打羽毛球", "我一般哪天做运动"),
    ("我是素食者，不吃肉", "请我吃饭能点烤鸭吗"),
    ("我的房贷还有二十年才还完", "我的购房借款什么时候结清"),
    ("我在减肥，目标是瘦十公斤", "我的体重计划是什么"),
    ("我乳糖不耐受", "我喝牛奶会怎样"),
    ("我的工位在公司十八楼", "我在几层上班"),
    ("我弟弟在深圳开了一家奶茶店", "我兄弟做什么生意"),
    ("我的结婚纪念日是十月一号", "我和爱人哪天成的家"),
    ("我周末喜欢去爬山", "休息日我爱做什么户外活动"),
    ("我用的电脑是苹果笔记本", "我工作用什么设备"),
    ("我晕车，坐长途大巴会吐", "我乘坐交通工具有什么不适"),
    ("我老家在四川绵阳", "我是哪里人"),
    ("我不喜欢吃辣", "川菜那种重口味我能接受吗"),
    ("我每个月工资一万五", "我的收入有多少"),
    ("我失眠，经常凌晨三点才睡着", "我为什么总是熬到后半夜"),
    ("我正在准备考研", "我最近在为哪场考试复习"),
    ("我爸爸做过心脏搭桥手术", "我父亲得过什么大病"),
    ("我会说粤语", "我懂哪种方言"),
    ("我最爱吃的水果是芒果", "我偏好哪种果子"),
    ("我每天通勤坐地铁二号线", "我怎么去上班"),
    ("我去年在云南大理待了一个月", "我之前在哪里长住过一段时间"),
    ("我左手腕骨折过", "我身体哪个部位受过重伤"),
    ("我喜欢看科幻小说，最爱《三体》", "我平时读哪类书"),
    ("我家阳台种了很多多肉植物", "我在家养什么花草"),
    ("我妹妹在英国读研究生", "我的姐妹在海外做什么"),
    ("我痛风，不能吃海鲜", "我为什么不碰虾蟹"),
    ("我喜欢喝普洱茶", "我平时爱喝什么饮品"),
    ("我是左撇子", "我习惯用哪只手写字"),
    ("我害怕坐飞机", "我对航空出行有什么顾虑"),
    ("我在学西班牙语", "我最近攻读哪种外文"),
    ("我的公司在滨江区", "我的单位位于哪个片区"),
    ("我每年体检都查出脂肪肝", "我的年度健康报告显示了什么问题"),
    ("我和妻子是在大学辩论社认识的", "我们夫妻俩怎么结识的"),
    ("我每晚睡前要泡脚", "我临睡有什么习惯"),
    ("我的微信头像是一只柴犬", "我社交软件上用什么图片"),
    ("我怕冷，冬天要穿秋裤", "降温时我怎么保暖"),
    ("我上周把钱包丢在出租车上了", "我最近遗失了什么东西"),
    ("我的理想是开一家民宿", "我将来想经营什么"),
]

# Chinese question -> English fact
ZH_Q_EN_FACT: list[tuple[str, str]] = [
    ("My grandmother turns ninety next spring", "我奶奶明年多大岁数"),
    ("I keep two goldfish in a tank on my desk", "我书桌上养了什么"),
    ("I'm training for the Shanghai marathon in November", "我在为哪场长跑比赛做准备"),
    ("My favorite dish is my mother's braised pork", "我最爱吃哪道家常菜"),
    ("I can't stand the smell of durian", "我受不了哪种水果的气味"),
    ("My daughter is learning to ride a bike", "孩子最近在练习骑什么"),
    ("I have a compass tattoo on my left arm", "我身上有什么纹身"),
    ("I collect vintage postage stamps", "我有什么收藏爱好"),
    ("My best friend Lao Zhang lives in Beijing", "我最好的朋友住在哪"),
    ("I get migraines when I don't sleep enough", "我缺觉会怎么样"),
    ("I volunteer at an animal shelter on Saturdays", "我周六去哪里做义工"),
    ("My laptop bag was a gift from my father", "我的电脑包是谁送的"),
    ("I played the violin as a child", "我小时候学过什么乐器"),
    ("I am afraid of heights", "我有恐高症吗"),
    ("I need to renew my driving licence in May", "我的驾照什么时候到期"),
]

# English question -> Chinese fact
EN_Q_ZH_FACT: list[tuple[str, str]] = [
    ("我牙齿不好，正在做根管治疗", "What dental treatment am I getting?"),
    ("我在学做蛋糕", "What am I learning to bake?"),
    ("我的邻居是一位退休的警察", "Who lives next door to me?"),
    ("我喜欢在雨天听爵士乐", "What music do I like on rainy days?"),
    ("我每个月给父母寄两千块钱", "How much money do I send my parents each month?"),
    ("我的生日是八月八号", "When is my birthday?"),
    ("我打算明年买一辆电动自行车", "What vehicle do I plan to buy next year?"),
    ("我小时候被蜜蜂蛰过，现在很怕虫子", "Why am I scared of insects?"),
    ("我家乡的特产是米粉", "What food is my hometown famous for?"),
    ("我最讨厌的家务是洗碗", "Which household chore do I dislike most?"),
    ("我在网上报了一个摄影课", "What online course did I sign up for?"),
    ("我外公是一名中医", "What did my grandfather do for a living?"),
    ("我每年春节都回老家过年", "Where do I go for Chinese New Year?"),
    ("我的左耳听力不太好", "Do I have any hearing problems?"),
    ("我养成了记账的习惯", "Do I keep track of my spending?"),
]

_ZH_PEOPLE = ["小王", "老李", "陈姐", "张经理", "刘阿姨", "小赵", "孙师傅", "何同学", "郑总", "马哥", "林小姐", "吴叔"]
_ZH_DAYS = ["周一", "周二", "周四", "周五", "明天", "后天", "下周一", "下周四"]
_ZH_PLACES = ["超市", "图书馆", "商场", "电影院", "菜市场", "火车站", "小区门口", "书店", "地下停车场", "快递站"]
_ZH_ITEMS = ["雨伞", "充电宝", "台灯", "保温杯", "行李箱", "电风扇", "自拍杆", "折叠椅", "拖把", "帆布包", "收纳盒", "电饭煲"]
_ZH_SHOWS = ["繁花", "漫长的季节", "狂飙", "人世间", "山海情", "觉醒年代", "父母爱情", "鸡毛飞上天"]
_ZH_ROOMS = ["客厅", "书房", "卧室", "储物间", "玄关", "厨房"]
_ZH_CITIES = ["南京", "苏州", "武汉", "长沙", "合肥", "厦门", "青岛", "西安"]
_ZH_STORES = ["面包店", "火锅店", "文具店", "理发店", "洗衣店", "五金店"]
_ZH_TEMPLATES = [
    "我上周在{place}买了{item}",
    "{person}约我{day}一起去{place}",
    "我把{item}借给了{person}",
    "{person}推荐我看电视剧《{show}》",
    "我的{item}放在{room}的柜子里",
    "我{month}月{d}号要去{city}开会",
    "我昨天在{place}碰到了{person}",
    "我答应{person}{day}帮他搬家",
    "我订了{month}月{d}号去{city}的高铁票",
    "我给{person}买了{item}当礼物",
    "{person}说{place}附近新开了一家{store}",
    "我{day}要去{place}取{item}",
]
_EN_PEOPLE = ["Tom", "Anna", "Mr. Lee", "Sarah", "Kevin", "Linda", "Mark", "Julia", "Peter", "Nina"]
_EN_DAYS = ["Monday", "Tuesday", "Thursday", "Friday", "tomorrow", "next Monday"]
_EN_PLACES = ["supermarket", "library", "mall", "cinema", "train station", "hardware store", "bookshop", "parking garage"]
_EN_ITEMS = ["umbrella", "power bank", "desk lamp", "thermos", "suitcase", "electric fan", "folding chair", "mop", "canvas tote", "storage box", "rice cooker"]
_EN_SHOWS = ["Breaking Bad", "The Crown", "Friends", "Succession", "Dark", "The Office"]
_EN_ROOMS = ["living room", "study", "bedroom", "storage room", "hallway", "kitchen"]
_EN_CITIES = ["Nanjing", "Suzhou", "Wuhan", "Changsha", "Hefei", "Xiamen", "Qingdao", "Xi'an"]
_EN_MONTHS = ["March", "April", "June", "July", "September", "October", "December"]
_EN_STORES = ["bakery", "hot pot place", "stationery shop", "barber shop", "laundromat"]
_EN_TEMPLATES = [
    "I bought a {item} at the {place} last week",
    "{person} asked me to go to the {place} with them on {day}",
    "I lent my {item} to {person}",
    "{person} recommended the series {show} to me",
    "My {item} is in the {room} cupboard",
    "I have a meeting in {city} on {month} {d}",
    "I ran into {person} at the {place} yesterday",
    "I promised {person} I would help them move on {day}",
    "I booked a train to {city} for {month} {d}",
    "I got {person} a {item} as a present",
    "{person} said a new {store} opened near the {place}",
    "I have to pick up my {item} at the {place} on {day}",
]


def distractors(n_zh: int = 200, n_en: int = 100, seed: int = 20260601) -> list[str]:
    """Deterministic first-person everyday facts that answer none of the questions."""
    rng = random.Random(seed)

    def make(templates, n, **pools):
        out: list[str] = []
        seen: set[str] = set()
        while len(out) < n:
            t = rng.choice(templates)
            slots = {k: rng.choice(v) for k, v in pools.items()}
            s = t.format(**slots)
            if s not in seen:
                seen.add(s)
                out.append(s)
        return out

    zh = make(_ZH_TEMPLATES, n_zh, person=_ZH_PEOPLE, day=_ZH_DAYS, place=_ZH_PLACES, item=_ZH_ITEMS, show=_ZH_SHOWS,
              room=_ZH_ROOMS, city=_ZH_CITIES, store=_ZH_STORES, month=[str(m) for m in range(1, 13)],
              d=[str(d) for d in range(1, 29)])
    en = make(_EN_TEMPLATES, n_en, person=_EN_PEOPLE, day=_EN_DAYS, place=_EN_PLACES, item=_EN_ITEMS, show=_EN_SHOWS,
              room=_EN_ROOMS, city=_EN_CITIES, store=_EN_STORES, month=_EN_MONTHS, d=[str(d) for d in range(1, 29)])
    return zh + en


def chinese_set() -> tuple[list[str], list[str], list[int], list[str]]:
    """(docs, queries, gold doc index per query, group per query) of the Chinese test."""
    docs: list[str] = []
    queries: list[str] = []
    gold: list[int] = []
    groups: list[str] = []
    for group, pairs in (("zh→zh", ZH_PAIRS), ("zh q→en fact", ZH_Q_EN_FACT), ("en q→zh fact", EN_Q_ZH_FACT)):
        for fact, question in pairs:
            gold.append(len(docs))
            docs.append(fact)
            queries.append(question)
            groups.append(group)
    docs.extend(distractors())
    return docs, queries, gold, groups


# ---- texts to embed -------------------------------------------------------------------------


def locomo_texts(convs: list[locomo.Conversation]) -> tuple[list[str], list[str]]:
    docs = [t.memory() for c in convs for t in c.turns]
    queries = [q.question for c in convs for q in c.questions]
    return docs, queries


def load_convs(args) -> list[locomo.Conversation]:
    convs = locomo.load(args.data)
    return convs[:2] if args.quick else convs


# ---- worker: one embedder, one fresh process -----------------------------------------------


def make_embedder(name: str):
    if name == "hash":
        from memdream.embed.fake import HashEmbedder

        return HashEmbedder(64)
    from memdream.embed import load_embedder

    return load_embedder(name)


def worker(args) -> int:
    t0 = time.perf_counter()
    emb = make_embedder(args.worker)
    if hasattr(emb, "load"):
        emb.load()
    load_s = time.perf_counter() - t0

    import numpy as np

    convs = load_convs(args)
    ldocs, lqueries = locomo_texts(convs)
    zdocs, zqueries, _, _ = chinese_set()

    emb.embed(["warm up"], kind="query")
    sample = [t.memory() for t in convs[0].turns[:TIMING_DOCS]]
    t = time.perf_counter()
    emb.embed(sample, kind="document")
    doc_ms = (time.perf_counter() - t) * 1000 / len(sample)
    t = time.perf_counter()
    emb.embed(zdocs, kind="document")
    fact_ms = (time.perf_counter() - t) * 1000 / len(zdocs)

    def single(qs):
        times = []
        for q in qs:
            t = time.perf_counter()
            emb.embed([q], kind="query")
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        return times[len(times) // 2], times[min(len(times) - 1, int(0.9 * len(times)))]

    q_med, q_p90 = single([q.question for q in convs[0].questions[:TIMING_QUERIES]])
    zq_med, _ = single(zqueries)

    parts = {
        "locomo_docs": (ldocs, "document"),
        "locomo_queries": (lqueries, "query"),
        "zh_docs": (zdocs, "document"),
        "zh_queries": (zqueries, "query"),
    }
    arrays = {}
    full_s = 0.0
    cached = []
    for part, (texts, kind) in parts.items():
        key = hashlib.sha1("\x1e".join([emb.model_id, kind, *texts]).encode()).hexdigest()[:16]
        cache = CACHE_DIR / f"{args.worker}-{part}-{key}.npy"
        if cache.exists() and not args.no_cache:
            arrays[part] = np.load(cache)
            cached.append(part)
            continue
        t = time.perf_counter()
        arrays[part] = emb.embed(texts, kind=kind)
        full_s += time.perf_counter() - t
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.save(cache, arrays[part])

    import resource

    out = Path(args.out)
    np.savez(out / f"{args.worker}.npz", **arrays)
    info = {
        "name": args.worker,
        "model_id": emb.model_id,
        "dim": int(emb.dim),
        "load_s": load_s,
        "doc_ms": doc_ms,
        "doc_sample_chars": sum(map(len, sample)) / len(sample),
        "fact_ms": fact_ms,
        "fact_chars": sum(map(len, zdocs)) / len(zdocs),
        "query_ms_median": q_med,
        "query_ms_p90": q_p90,
        "zh_query_ms_median": zq_med,
        "embed_all_s": full_s,
        "cached": cached,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    (out / f"{args.worker}.json").write_text(json.dumps(info))
    return 0


# ---- scoring -------------------------------------------------------------------------------


def bm25_scores(doc_tokens: list[list[str]], query_tokens: list[list[str]]):
    """(n_queries, n_docs) BM25 scores (bm25s, Lucene variant, k1=1.5, b=0.75)."""
    import bm25s
    import numpy as np

    r = bm25s.BM25()
    r.index(doc_tokens, show_progress=False)
    out = np.zeros((len(query_tokens), len(doc_tokens)), dtype=np.float32)
    for i, qt in enumerate(query_tokens):
        ids = r.get_tokens_ids(qt)
        if ids:
            out[i] = r.get_scores_from_ids(ids)
    return out


def memdream_bm25(docs: list[str], queries: list[str]):
    from memdream.model.tokens import query_tokens, tokens

    return bm25_scores([tokens(d) for d in docs], [query_tokens(q) for q in queries])


def attainable_bm25(docs: list[str], queries: list[str]):
    """(n_queries, 1): the most BM25 any document could score for each query, sum of its tokens' idf.

    With the Lucene variant a term contributes at most its idf (tf -> infinity); a query token
    that no document has counts with the idf of df=0. memdream's index keeps document
    frequencies, so recall can compute this per query at no cost.
    """
    import math
    from collections import Counter

    import numpy as np

    from memdream.model.tokens import query_tokens, tokens

    n = len(docs)
    df = Counter(t for d in docs for t in set(tokens(d)))
    idf = lambda f: math.log(1 + (n - f + 0.5) / (f + 0.5))  # noqa: E731
    ub = [sum(idf(df.get(t, 0)) for t in query_tokens(q)) for q in queries]
    return np.array([[u if u > 0 else 1.0] for u in ub], dtype=np.float32)


def native_bm25(docs: list[str], queries: list[str]):
    """bm25s' own tokenizer (English stopwords, PyStemmer), for reference."""
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer("english")
    tok = lambda xs: bm25s.tokenize(xs, stopwords="en", stemmer=stem, return_ids=False, show_progress=False)  # noqa: E731
    return bm25_scores(tok(docs), [list(dict.fromkeys(q)) for q in tok(queries)])


def minmax(x):
    import numpy as np

    lo = x.min(axis=1, keepdims=True)
    span = x.max(axis=1, keepdims=True) - lo
    return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1), 0).astype(np.float32)


def ranks(scores):
    """1-based rank of each doc per query (ties: earlier doc first)."""
    import numpy as np

    order = np.argsort(-scores, axis=1, kind="stable")
    r = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    r[rows, order] = np.arange(1, scores.shape[1] + 1)[None, :]
    return r


def fuse(method: str, cos, bm, w: float = BLEND_W, k: int = RRF_K, tau: float = 0.0, ub=None):
    """Fused scores (n_queries, n_docs). Pure functions of the two score matrices
    (and, for "capped", of each query's attainable BM25 `ub`).

    blend:    w*cos + (1-w)*minmax(bm)                 (cosine as is)
    blend_mm: w*minmax(cos) + (1-w)*minmax(bm)
    rrf:      w/(k+rank_dense) + (1-w)/(k+rank_bm25)   (w=0.5 is plain RRF; docs with BM25
              score 0 get no BM25 term, as if BM25 had not returned them)
    capped:   w*cos + (1-w)*bm / max(max(bm), tau*ub)  (min-max, except that a query whose best
              BM25 match reaches less than tau of what it could attain has its BM25 side shrunk
              in proportion: weak, accidental keyword matches stop outranking semantic ones)
    """
    if method == "dense":
        return cos
    if method == "bm25":
        return bm
    if method == "blend":
        return w * cos + (1 - w) * minmax(bm)
    if method == "blend_mm":
        return w * minmax(cos) + (1 - w) * minmax(bm)
    if method == "capped":
        import numpy as np

        return w * cos + (1 - w) * bm / np.maximum(np.maximum(bm.max(axis=1, keepdims=True), tau * ub), 1e-9)
    if method == "rrf":
        rb = 1.0 / (k + ranks(bm))
        rb[bm <= 0] = 0.0
        return w / (k + ranks(cos)) + (1 - w) * rb
    raise ValueError(method)


class LocomoEval:
    """Score matrices per conversation, and metrics for any fusion of them."""

    def __init__(self, convs: list[locomo.Conversation]):
        self.convs = convs
        self.doc_spans, self.q_spans = [], []
        d = q = 0
        for c in convs:
            self.doc_spans.append((d, d + len(c.turns)))
            self.q_spans.append((q, q + len(c.questions)))
            d += len(c.turns)
            q += len(c.questions)
        docs, queries = locomo_texts(convs)
        dated = [t.memory(with_date=True) for c in convs for t in c.turns]
        self.bm = [memdream_bm25(docs[a:b], queries[x:y]) for (a, b), (x, y) in zip(self.doc_spans, self.q_spans, strict=True)]
        self.ub = [attainable_bm25(docs[a:b], queries[x:y]) for (a, b), (x, y) in zip(self.doc_spans, self.q_spans, strict=True)]
        self.bm_dated = [memdream_bm25(dated[a:b], queries[x:y]) for (a, b), (x, y) in zip(self.doc_spans, self.q_spans, strict=True)]
        self.bm_native = [native_bm25(docs[a:b], queries[x:y]) for (a, b), (x, y) in zip(self.doc_spans, self.q_spans, strict=True)]

    def cosines(self, doc_vecs, query_vecs):
        return [query_vecs[x:y] @ doc_vecs[a:b].T for (a, b), (x, y) in zip(self.doc_spans, self.q_spans, strict=True)]

    def evaluate(self, score_mats, conv_idx=None) -> dict[str, dict[str, float]]:
        import numpy as np

        rows = []
        for i, (c, s) in enumerate(zip(self.convs, score_mats, strict=True)):
            if conv_idx is not None and i not in conv_idx:
                continue
            top = np.argsort(-s, axis=1, kind="stable")[:, :10]
            ids = [t.dia_id for t in c.turns]
            for q, row in zip(c.questions, top, strict=True):
                rows.append((q.category, locomo.score_question([ids[j] for j in row], q.evidence)))
        return locomo.summarize(rows)


def objective(summary) -> float:
    """LoCoMo tuning objective: mean of turn recall@5 and @10 over the questions."""
    return (summary["all"]["R@5"] + summary["all"]["R@10"]) / 2


def zh_metrics(scores, gold, groups, subset=None) -> dict[str, dict[str, float]]:
    """Recall@1/@5 per group and overall, optionally over a subset of the questions."""
    import numpy as np

    top = np.argsort(-scores, axis=1, kind="stable")[:, :5]
    keep = set(range(len(gold))) if subset is None else set(subset)
    out: dict[str, dict[str, float]] = {}
    for g in [*dict.fromkeys(groups), "all"]:
        idx = [i for i, gg in enumerate(groups) if i in keep and (g == "all" or gg == g)]
        if not idx:
            continue
        r1 = sum(top[i, 0] == gold[i] for i in idx) / len(idx)
        r5 = sum(gold[i] in top[i] for i in idx) / len(idx)
        out[g] = {"R@1": float(r1), "R@5": float(r5), "n": len(idx)}
    return out


def zh_objective(m) -> float:
    return (m["all"]["R@1"] + m["all"]["R@5"]) / 2


def run_worker(name: str, args, out: Path) -> dict | None:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--out", str(out), "--data", str(args.data)]
    cmd += ["--quick"] if args.quick else []
    cmd += ["--no-cache"] if args.no_cache else []
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {name}: skipped ({msg})", file=sys.stderr)
        return {"name": name, "error": msg}
    info = json.loads((out / f"{name}.json").read_text())
    print(f"  {name}: done in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return info


def machine_line() -> str:
    from remember_latency import cpu_name

    cpu = cpu_name()
    import numpy as np

    vers = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for dist in ("bm25s", "onnxruntime"):
        try:
            from importlib.metadata import version

            vers.append(f"{dist} {version(dist)}")
        except Exception:
            pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}; {', '.join(vers)}; "
            f"every runtime pinned to 1 thread; load average at start {load}; run on {datetime.now():%Y-%m-%d %H:%M}")


def grid_params():
    """Every fusion setting searched: (family, params)."""
    out = []
    for w in GRID_W:
        out.append(("blend", {"w": w}))
        out.append(("blend_mm", {"w": w}))
        for k in GRID_RRF_K:
            out.append(("rrf", {"w": w, "k": k}))
        for tau in GRID_TAU:
            out.append(("capped", {"w": w, "tau": tau}))
    return out


def label_of(family: str, p: dict) -> str:
    if family == "blend":
        return f"blend, w={p['w']}"
    if family == "blend_mm":
        return f"blend of min-max both, w={p['w']}"
    if family == "rrf":
        return f"RRF, w={p['w']}, k={p['k']}"
    if family == "capped":
        return f"capped blend, w={p['w']}, tau={p['tau']}"
    return family


class Bench:
    """Everything one embedder needs scored: LoCoMo and the Chinese set, split for tuning."""

    def __init__(self, ev: LocomoEval, train: set[int], test: set[int]):
        self.ev, self.train, self.test = ev, train, test
        self.zdocs, self.zqueries, self.zgold, self.zgroups = chinese_set()
        self.zbm = memdream_bm25(self.zdocs, self.zqueries)
        self.zub = attainable_bm25(self.zdocs, self.zqueries)
        self.z_even = [i for i in range(len(self.zqueries)) if i % 2 == 0]
        self.z_odd = [i for i in range(len(self.zqueries)) if i % 2 == 1]

    def run(self, cos, zcos, family: str, p: dict) -> dict:
        ev = self.ev
        kw = dict(w=p.get("w", BLEND_W), k=p.get("k", RRF_K), tau=p.get("tau", 0.0))
        mats = [fuse(family, c, b, ub=u, **kw) for c, b, u in zip(cos, ev.bm, ev.ub, strict=True)]
        zs = fuse(family, zcos, self.zbm, ub=self.zub, **kw)
        return {
            "all": ev.evaluate(mats),
            "train": ev.evaluate(mats, self.train),
            "test": ev.evaluate(mats, self.test),
            "zh": zh_metrics(zs, self.zgold, self.zgroups),
            "zh_even": zh_metrics(zs, self.zgold, self.zgroups, self.z_even),
            "zh_odd": zh_metrics(zs, self.zgold, self.zgroups, self.z_odd),
        }


def summarize_grid(b: Bench, cos, zcos) -> dict:
    """Score every grid point; pick the best per family on LoCoMo-train, and jointly."""
    results = [(fam, p, b.run(cos, zcos, fam, p)) for fam, p in grid_params()]
    best_locomo = {}
    best_joint = {}
    for fam in ("blend", "blend_mm", "rrf", "capped"):
        rs = [r for r in results if r[0] == fam]
        best_locomo[fam] = max(rs, key=lambda r: objective(r[2]["train"]))
        best_joint[fam] = max(rs, key=lambda r: (objective(r[2]["train"]) + zh_objective(r[2]["zh_even"])) / 2)
    return {"results": results, "best_locomo": best_locomo, "best_joint": best_joint}


def fmt(x: float) -> str:
    return f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Measure local embedders and BM25 fusions (LoCoMo + a Chinese set).")
    ap.add_argument("--data", default=str(locomo.DEFAULT_DATA), help="locomo10.json")
    ap.add_argument("--quick", action="store_true", help="2 LoCoMo conversations")
    ap.add_argument("--embedders", default=",".join(ALL_EMBEDDERS))
    ap.add_argument("--report", help="Markdown file to write the section into (between markers)")
    ap.add_argument("--no-cache", action="store_true", help="re-embed even if bench/out/embcache has the vectors")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)

    import tempfile

    import numpy as np

    cmd = "python bench/embedders.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    machine = machine_line()
    convs = load_convs(args)
    n = len(convs)
    train = set(range(max(1, n // 2)))
    test = set(range(max(1, n // 2), n))
    train_label = f"conversations 0-{max(train)}" if len(train) > 1 else "conversation 0"
    test_label = f"conversations {min(test)}-{max(test)}" if len(test) > 1 else f"conversation {min(test)}"
    print(f"LoCoMo: {n} conversations, {sum(len(c.questions) for c in convs)} questions; BM25 ...", file=sys.stderr)
    ev = LocomoEval(convs)
    b = Bench(ev, train, test)

    names = [x.strip() for x in args.embedders.split(",") if x.strip()]
    infos = []
    with tempfile.TemporaryDirectory(prefix="memdream-emb-") as tmp:
        for name in names:
            print(f"embedder {name} ...", file=sys.stderr)
            info = run_worker(name, args, Path(tmp))
            if "error" not in info:
                with np.load(Path(tmp) / f"{name}.npz") as z:
                    info["arrays"] = {k: z[k] for k in z.files}
            infos.append(info)
    ok = [i for i in infos if "error" not in i]

    # rows: (label, result of Bench.run or a BM25-only equivalent)
    rows: list[tuple[str, dict]] = []
    for label, mats in (("BM25, memdream tokens", ev.bm), ("BM25, memdream tokens, date-prefixed turns", ev.bm_dated),
                        ("BM25, bm25s tokenizer (en stopwords, stemmed)", ev.bm_native)):
        r = {"all": ev.evaluate(mats), "train": ev.evaluate(mats, train), "test": ev.evaluate(mats, test)}
        if label == "BM25, memdream tokens":
            r.update(zh=zh_metrics(b.zbm, b.zgold, b.zgroups), zh_even=zh_metrics(b.zbm, b.zgold, b.zgroups, b.z_even),
                     zh_odd=zh_metrics(b.zbm, b.zgold, b.zgroups, b.z_odd))
        rows.append((label, r))
    grids: dict[str, dict] = {}
    tuned: dict[str, dict] = {}
    for info in ok:
        name = info["name"]
        a = info["arrays"]
        cos = ev.cosines(a["locomo_docs"], a["locomo_queries"])
        zcos = a["zh_queries"] @ a["zh_docs"].T
        print(f"fusion grid for {name} ...", file=sys.stderr)
        g = summarize_grid(b, cos, zcos)
        grids[name] = g
        tuned[name] = {
            "locomo": {fam: {"params": r[1]} for fam, r in g["best_locomo"].items()},
            "joint": {fam: {"params": r[1]} for fam, r in g["best_joint"].items()},
        }
        rows.append((f"{name}: dense", b.run(cos, zcos, "dense", {})))
        rows.append((f"{name}: blend 0.7 cos + 0.3 BM25", b.run(cos, zcos, "blend", {"w": 0.7})))
        rows.append((f"{name}: RRF k=60", b.run(cos, zcos, "rrf", {"w": 0.5, "k": 60})))
        for fam in ("blend", "blend_mm", "rrf", "capped"):
            f, p, r = g["best_locomo"][fam]
            rows.append((f"{name}: {label_of(f, p)} (tuned on LoCoMo)", r))
        for fam in ("blend", "capped"):
            f, p, r = g["best_joint"][fam]
            rows.append((f"{name}: {label_of(f, p)} (tuned jointly)", r))

    zgroups = b.zgroups
    groups = list(dict.fromkeys(zgroups))
    lines = [
        REPORT_START,
        "## Local embedders and fusion with BM25 (bench/embedders.py)",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Machine: {machine}.",
        "",
        "### Speed, one thread",
        "",
    ]
    if ok:
        lines += [
            f"Load = import + model load in a fresh process. Document = one `embed()` of {TIMING_DOCS} LoCoMo turns "
            f"(mean {ok[0]['doc_sample_chars']:.0f} characters) divided by {TIMING_DOCS}; short fact = the same for the "
            f"{len(b.zdocs)} facts of the Chinese set (mean {ok[0]['fact_chars']:.0f} characters). Query = one `embed([question])` "
            f"call: median and p90 over {TIMING_QUERIES} LoCoMo questions; zh query = median over the "
            f"{len(b.zqueries)} questions of the Chinese set. Peak RSS of the worker process (includes the benchmark's own data).",
            "",
        ]
    lines += [
        "| embedder | model_id | dim | load (s) | ms / LoCoMo turn (batch) | ms / short fact (batch) | ms / query median (p90) | ms / zh query | peak RSS (MB) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for i in ok:
        lines.append(f"| {i['name']} | `{i['model_id']}` | {i['dim']} | {i['load_s']:.2f} | {i['doc_ms']:.2f} | {i['fact_ms']:.2f} | "
                     f"{i['query_ms_median']:.2f} ({i['query_ms_p90']:.2f}) | {i['zh_query_ms_median']:.2f} | {i['peak_rss_mb']:.0f} |")
    for i in infos:
        if "error" in i:
            lines.append(f"| {i['name']} | not measured: {i['error']} | | | | | | | |")
    nq = sum(len(c.questions) for c in convs)
    lines += [
        "",
        f"### LoCoMo retrieval ({n} conversations, {nq} questions of categories 1-4, one memory per turn)",
        "",
        "Memory text `{speaker}: {text}` (+ ` [image: caption]`); retrieval within each conversation; turn recall@k "
        "and session recall@5, mean over questions. BM25 = bm25s (Lucene, k1 1.5, b 0.75) over memdream's tokens unless "
        "said otherwise; the fusions use the undated BM25 and cosine as is. "
        "blend = w·cos + (1-w)·minmax(BM25); blend of min-max both = w·minmax(cos) + (1-w)·minmax(BM25); "
        "RRF = w/(k+rank_dense) + (1-w)/(k+rank_BM25) (plain RRF: w 0.5, k 60); "
        "capped blend = w·cos + (1-w)·BM25/max(best BM25 of the query, tau·attainable BM25 of the query), where the "
        "attainable BM25 is the sum of the idf of the query's tokens (what a document containing all of them could reach), "
        "so a query whose best keyword match is weak gets its BM25 side scaled down instead of stretched to 1. "
        f"Tuned on LoCoMo = best of the grid on {train_label} (objective: mean of R@5 and R@10). "
        f"Tuned jointly = best of the mean of that objective and the Chinese set's (mean of R@1 and R@5) on its "
        f"even-numbered questions. Held out: {test_label} (and the odd-numbered Chinese questions).",
        "",
        f"| method | R@5 | R@10 | S@5 | R@10 held-out ({test_label}) | R@10 multi-hop | R@10 temporal | R@10 open-domain | R@10 single-hop |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, r in rows:
        s_all, s_test = r["all"], r["test"]
        cats = [fmt(s_all[str(c)]["R@10"]) if str(c) in s_all else "-" for c in (1, 2, 3, 4)]
        lines.append(f"| {label} | {fmt(s_all['all']['R@5'])} | {fmt(s_all['all']['R@10'])} | {fmt(s_all['all']['S@5'])} | "
                     f"{fmt(s_test['all']['R@10'])} | " + " | ".join(cats) + " |")
    # Chinese
    lines += [
        "",
        f"### Chinese and cross-lingual set ({len(b.zqueries)} questions, {len(b.zdocs)} facts)",
        "",
        f"{len(ZH_PAIRS)} Chinese facts each asked with a paraphrase sharing few characters (我对花生过敏 / 我吃坚果会有什么问题), "
        f"{len(ZH_Q_EN_FACT)} Chinese questions about English facts, {len(EN_Q_ZH_FACT)} English questions about Chinese facts, "
        "among 300 deterministic distractor facts (200 Chinese, 100 English); one gold fact per question; recall@1 / recall@5. "
        "BM25 over memdream's tokens (jieba words + character bigrams). The set is built so that keywords barely help: it "
        "measures what fusion costs when BM25 has nothing to offer, not the (easy) case of a question that reuses the fact's words.",
        "",
        "| method | " + " | ".join(f"{g} (n={sum(x == g for x in zgroups)})" for g in groups)
        + f" | all (n={len(zgroups)}) | odd half, held out (n={len(b.z_odd)}) |",
        "| --- | " + " | ".join("---:" for _ in groups) + " | ---: | ---: |",
    ]
    for label, r in rows:
        if "zh" not in r:
            continue
        m, mo = r["zh"], r["zh_odd"]
        lines.append(f"| {label} | " + " | ".join(f"{fmt(m[g]['R@1'])} / {fmt(m[g]['R@5'])}" for g in [*groups, "all"])
                     + f" | {fmt(mo['all']['R@1'])} / {fmt(mo['all']['R@5'])} |")
    # grids
    if grids:
        enames = list(grids)
        lines += ["", "### Tuning grids", "",
                  f"Each cell: LoCoMo objective on {train_label} / on {test_label}. "
                  "blend: w=1 is dense alone, w=0 is BM25 alone.", "",
                  "| blend w | " + " | ".join(enames) + " |", "| ---: | " + " | ".join("---:" for _ in enames) + " |"]
        for w in GRID_W:
            cells = []
            for name in enames:
                r = next(r for f, p, r in grids[name]["results"] if f == "blend" and p["w"] == w)
                cells.append(f"{objective(r['train']):.3f} / {objective(r['test']):.3f}")
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
        lines += ["", "| weighted RRF w (best k) | " + " | ".join(enames) + " |", "| ---: | " + " | ".join("---:" for _ in enames) + " |"]
        for w in GRID_W:
            cells = []
            for name in enames:
                rs = [(p, r) for f, p, r in grids[name]["results"] if f == "rrf" and p["w"] == w]
                p, r = max(rs, key=lambda pr: objective(pr[1]["train"]))
                cells.append(f"{objective(r['train']):.3f} / {objective(r['test']):.3f} (k={p['k']})")
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
        lines += ["", "capped blend: for each tau, the w with the best joint objective; cell = LoCoMo train / held-out, "
                  "Chinese even / odd half (mean of R@1 and R@5). tau=0 is the plain blend.", "",
                  "| tau | " + " | ".join(enames) + " |", "| ---: | " + " | ".join("---" for _ in enames) + " |"]
        for tau in GRID_TAU:
            cells = []
            for name in enames:
                rs = [(p, r) for f, p, r in grids[name]["results"] if f == "capped" and p["tau"] == tau]
                p, r = max(rs, key=lambda pr: (objective(pr[1]["train"]) + zh_objective(pr[1]["zh_even"])) / 2)
                cells.append(f"w={p['w']}: {objective(r['train']):.3f} / {objective(r['test']):.3f}, "
                             f"zh {zh_objective(r['zh_even']):.3f} / {zh_objective(r['zh_odd']):.3f}")
            lines.append(f"| {tau} | " + " | ".join(cells) + " |")
    lines.append(REPORT_END)
    section = "\n".join(lines)
    print(section)

    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "embedders.json").write_text(json.dumps({
        "command": cmd, "machine": machine,
        "speed": [{k: v for k, v in i.items() if k != "arrays"} for i in infos],
        "tuned": tuned,
        "rows": [{"method": label, **r} for label, r in rows],
    }, ensure_ascii=False, indent=1))
    if args.report:
        write_report(Path(args.report), section)
    return 0


def write_report(path: Path, section: str) -> None:
    """Replace the marked section of `path`, or append it; the rest of the file is left alone."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = text.find(REPORT_START), text.find(REPORT_END)
    if start != -1 and end > start:
        text = text[:start] + section + text[end + len(REPORT_END):]
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "") + section + "\n"
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
