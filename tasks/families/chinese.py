"""The Chinese (`lang: zh`) strings of the built-in families: framing, needle sentences, questions and answer
prefixes, written for this project in plain modern Chinese (NeedleBench asks its Chinese needles the same way:
the document in Chinese, the question in Chinese, the answer a value).

What is asked stays the same as in English: keys, values, names and variable names are drawn exactly as for
`en` and stay as they are (`amber-lobster`, `6030913`, `Ada`, `VAR ABCDE`), so an answer is scored by the same
rules. Every needle sentence ends with `。`, as a sentence of the `prose:zh` haystack does, so it is a unit of
its own there; all but variable tracking's (code, kept as RULER writes it) start with a Chinese character.
RULER's layout (`template: ruler`) and contract clauses are English only."""

from __future__ import annotations

NIAH_NOUNS = {"number": "数字", "word": "单词", "uuid": "UUID"}
RECALL_NOUNS = {"hex": "访问令牌", "uuid": "记录编号"}


def join_names(items: list[str]) -> str:
    """`a`, `a和b`, `a、b和c`."""
    return items[0] if len(items) == 1 else "、".join(items[:-1]) + "和" + items[-1]


def niah_needle(value_kind: str, key: str, value: str) -> str:
    return f"关于{key}的特殊魔法{NIAH_NOUNS[value_kind]}之一是：{value}。"


def niah_frame(value_kind: str, keys: list[str], plural: bool) -> tuple[str, str, str]:
    """Head, question and answer prefix."""
    noun, asked = NIAH_NOUNS[value_kind], join_names(keys)
    head = f"下面的文本中藏着一些特殊魔法{noun}。请记住它们，之后我会就这些{noun}向你提问。"
    if plural:
        return head, f"文中提到的{asked}的所有特殊魔法{noun}分别是什么？", f"文中提到的{asked}的特殊魔法{noun}是："
    return head, f"文中提到的{asked}的特殊魔法{noun}是什么？", f"文中提到的{asked}的特殊魔法{noun}是："


def recall_needle(kind: str, key: str, string: str) -> str:
    return f"属于{key}的{RECALL_NOUNS[kind]}是{string}。"


def recall_frame(kind: str, key: str) -> tuple[str, str, str]:
    """Head, question and answer prefix for a hex token, a uuid record id or a code line."""
    if kind == "code":
        return (
            "下面的文本中藏着一些Python函数。请准确记住它们，之后我会请你引用其中一个函数的一行代码。",
            f"文中定义的函数{key}的return语句原文是什么？请准确引用这一行，不要带缩进。",
            f"函数{key}的return语句是：",
        )
    noun = RECALL_NOUNS[kind]
    return (
        f"下面的文本中藏着一些{noun}。请准确记住它们，之后我会请你原样复述其中一个。",
        f"文中提到的{key}的{noun}是什么？请逐个字符准确复述。",
        f"文中提到的{key}的{noun}是",
    )


VARTRACK_HEAD = "请记住并追踪下面文本中隐藏的变量赋值链。"


def vartrack_frame(value: str, names: int) -> tuple[str, str]:
    """Question and answer prefix (the head is `VARTRACK_HEAD`)."""
    return (
        f"找出上文中所有被赋值为{value}的变量。",
        f"答：根据上文中的变量赋值链，共有{names}个变量被赋值为{value}，它们是：",
    )


def keychain_fact(key: str, next_key: str) -> str:
    return f"钥匙{key}能打开装着钥匙{next_key}的箱子。"


def keychain_last(key: str, value: str) -> str:
    return f"钥匙{key}能打开装着数值{value}的箱子。"


def keychain_frame(first: str) -> tuple[str, str, str]:
    return (
        "下面的文本中描述了一些钥匙以及它们能打开的箱子。请记住它们，之后我会就此向你提问。",
        f"从钥匙{first}开始，沿着钥匙一路找下去，文中最终得到的数值是多少？",
        f"从钥匙{first}开始沿着钥匙找下去，最终得到的数值是",
    )


def kinship_fact(parent: str, child: str) -> str:
    return f"父母关系：{parent}是{child}的父亲或母亲。"


def kinship_frame(youngest: str) -> tuple[str, str, str]:
    return (
        "下面的文本中描述了一些亲属关系。请记住它们，之后我会就此向你提问。",
        f"文中提到的{youngest}最年长的祖先是谁？",
        f"文中提到的{youngest}最年长的祖先是",
    )
