"""A deterministic synthetic corpus of personal facts, Chinese and English, for scale benchmarks."""

from __future__ import annotations

import random

PEOPLE_ZH = ["小王", "李雷", "韩梅梅", "张伟", "王芳", "刘洋", "陈静", "杨帆", "赵磊", "孙丽"]
PEOPLE_EN = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
PLACES_ZH = ["余杭区", "西湖区", "滨江区", "浦东新区", "海淀区", "南山区", "天河区", "武侯区"]
PLACES_EN = ["Berlin", "Lisbon", "Osaka", "Denver", "Nairobi", "Oslo", "Austin", "Porto"]
THINGS_ZH = ["乌龙茶", "手冲咖啡", "羽毛球", "围棋", "火锅", "摄影", "长跑", "吉他", "潜水", "书法"]
THINGS_EN = ["green tea", "espresso", "badminton", "chess", "ramen", "photography", "trail running", "guitar", "sailing", "pottery"]

TEMPLATES_ZH = [
    "{p}的生日是{m}月{d}日",
    "周{w}下午和{p}在{place}开会，讨论项目编号 {n}",
    "{p}最近迷上了{thing}，每周练 {k} 次",
    "上次去{place}出差住的酒店房间号是 {n}",
    "{p}推荐的书是《{thing}入门》第 {k} 版",
    "订单 {n} 的{thing}预计{m}月{d}日送达",
    "和{p}约好{m}月{d}日一起去{place}吃{thing}",
]
TEMPLATES_EN = [
    "{p}'s birthday is on {mon} {d}",
    "Met {p} in {place} on a {wd} to talk about project {n}",
    "{p} has been into {thing} lately, {k} times a week",
    "The hotel room in {place} last trip was number {n}",
    "{p} recommended the book 'Intro to {thing}', edition {k}",
    "Order {n} with the {thing} should arrive on {mon} {d}",
    "Planned to have {thing} with {p} in {place} on {mon} {d}",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def facts(n: int, seed: int = 7) -> list[str]:
    """`n` distinct facts, half Chinese and half English, the same for the same seed."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        if len(out) % 2 == 0:
            t = rng.choice(TEMPLATES_ZH).format(
                p=rng.choice(PEOPLE_ZH), place=rng.choice(PLACES_ZH), thing=rng.choice(THINGS_ZH),
                m=rng.randint(1, 12), d=rng.randint(1, 28), w="一二三四五"[rng.randint(0, 4)],
                n=rng.randint(10000, 9999999), k=rng.randint(1, 9),
            )  # fmt: skip
        else:
            t = rng.choice(TEMPLATES_EN).format(
                p=rng.choice(PEOPLE_EN), place=rng.choice(PLACES_EN), thing=rng.choice(THINGS_EN),
                mon=rng.choice(MONTHS), d=rng.randint(1, 28), wd=rng.choice(WEEKDAYS),
                n=rng.randint(10000, 9999999), k=rng.randint(1, 9),
            )  # fmt: skip
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out
