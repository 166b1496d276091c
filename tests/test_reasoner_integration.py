"""The reasoner with real models: the local Qwen2.5-Coder GGUF, and a remote llama.cpp server on loopback.

Content is checked only where a grammar or the prompt pins it (valid calls of known tools, a spoken
answer that goes on from the holding line); what a model knows may differ on another CPU.
"""

from __future__ import annotations

import json
import re

import pytest

from agent.deciding.reasoner import Reasoner, ReasonerSettings, holding_line
from agent.deciding.reference import KitchenReference
from agent.model.llm import LlamaChatModel, LlamaSettings
from agent.model.remote import RemoteChatModel, RemoteSettings
from tests.test_remote_model_integration import llama_server  # noqa: F401 - the real server fixture
from tests.test_turn_tools import Kitchen

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def qwen(model_path) -> LlamaChatModel:
    chat = LlamaChatModel(LlamaSettings(model_path("qwen2.5-coder-1.5b/model.gguf"), n_ctx=2048, n_threads=2))
    chat.load()
    return chat


async def answer(reasoner: Reasoner, text: str, line: str = "") -> str:
    return "".join([p async for p in reasoner.answer(text, (), line, reasoner.facts_for(text))])


async def test_the_local_reasoner_goes_on_from_the_holding_line_in_a_spoken_sentence(qwen):
    reasoner = Reasoner(qwen, Kitchen().registry(), "en", ReasonerSettings(max_tokens=60), reference=KitchenReference())
    line = holding_line("knowledge", "en")
    said = await answer(reasoner, "How long should I let a steak rest?", line)
    assert said.strip() and line not in said  # it went on from the line, not over it again
    assert not re.search(r"^\s*[-*#]|\*\*", said, re.M)  # spoken words, no markdown
    assert re.search(r"\d|minute", said)  # the reference's fact is about minutes


async def test_prewarm_and_read_ahead_leave_only_the_question_to_read(qwen):
    reasoner = Reasoner(qwen, Kitchen().registry(), "en", ReasonerSettings(max_tokens=4), reference=KitchenReference())
    question = "How long does dried spaghetti take to cook?"
    qwen.forget_heads()
    await answer(reasoner, question)
    cold_total, cold_evaluated = qwen.last_prompt
    assert cold_evaluated == cold_total - 1 or cold_evaluated == cold_total  # nothing kept: all of it read

    qwen.forget_heads()
    assert await reasoner.prewarm() == 2  # the answer's and the plan's heads
    await answer(reasoner, question)
    warm_total, warm_evaluated = qwen.last_prompt
    assert warm_total == cold_total and warm_evaluated < cold_evaluated / 3

    qwen.forget_heads()
    await qwen.keep_heads(reasoner.heads()[:1])  # the answer's head only: the plan's is not needed here
    assert await reasoner.read_ahead("How long does dried spaghetti") > 0
    await answer(reasoner, question)
    _, read_ahead_evaluated = qwen.last_prompt
    assert read_ahead_evaluated < warm_evaluated


async def test_the_local_reasoner_makes_valid_calls_of_known_tools_under_its_grammar(qwen):
    kitchen = Kitchen()
    reasoner = Reasoner(qwen, kitchen.registry(), "en")
    plans = await reasoner.plan("Add flour and butter to my shopping list.")
    assert 1 <= len(plans) <= reasoner.settings.max_calls
    assert {p.tool for p in plans} <= set(kitchen.registry().names)
    json.loads(plans[0].raw)


async def test_a_remote_reasoner_answers_and_plans_through_a_real_llama_cpp_server(llama_server):  # noqa: F811
    remote = RemoteChatModel(RemoteSettings(base_url=llama_server.url, max_tokens=24))
    reasoner = Reasoner(remote, Kitchen().registry(), "en", ReasonerSettings(max_tokens=24), where=llama_server.url)
    assert not reasoner.continues_reply  # so the holding line goes in its system prompt
    said = await answer(reasoner, "Why does bread go stale?", holding_line("knowledge", "en"))
    assert said.strip()
    plans = await reasoner.plan("Add milk to the shopping list.")
    assert all(p.tool in Kitchen().registry().names for p in plans)
