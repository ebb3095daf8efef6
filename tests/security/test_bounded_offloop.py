"""The agent's conversation saves (redacted by the store, with megabytes of job output in
tool results) and the skills' script parsing run in worker threads, never on the server's
event loop."""

from __future__ import annotations

import threading

from agents import agent
from fake_llm import FakeLLM, text, tool_use

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store


async def test_agent_saves_and_parses_off_the_event_loop(tmp_path, monkeypatch, data_dir):
    with FakeLLM() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key-offloop-0123456789")
        monkeypatch.delenv("DIAMOND_LLM_PROVIDER", raising=False)
        fed = Federation(FederationConfig(sites=[SiteConfig(
            name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))]),
            store=Store(tmp_path / "s.sqlite3"))
        saves: list[bool] = []  # conversation saves; True: on the event loop's thread
        store_update = fed.store.update_task

        def spy(*args, **kw):
            if "messages" in (kw.get("data") or {}):
                saves.append(threading.current_thread() is threading.main_thread())
            return store_update(*args, **kw)
        monkeypatch.setattr(fed.store, "update_task", spy)
        parsed: list[bool] = []
        translate = Federation.translate

        def translate_spy(*args, **kw):
            parsed.append(threading.current_thread() is threading.main_thread())
            return translate(*args, **kw)
        monkeypatch.setattr(Federation, "translate", staticmethod(translate_spy))
        fake.script([tool_use("translate", {"script": "#!/bin/bash\n#SBATCH -N 1\nhostname\n",
                                            "to": "pbs"})], [text("done")])
        await fed.start()
        try:
            task = await agent(fed).ask("translate it", approval="auto")
            done = await agent(fed).wait(task["id"], timeout=60)
        finally:
            await agent(fed).close()
            await fed.close()
        assert done["state"] == "done", done
        assert saves and not any(saves), saves
        assert parsed and not any(parsed), parsed
