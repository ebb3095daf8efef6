"""The Jupyter server extension: one Federation per (user) server, REST API and events."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Dict, Enum, Float, Int, List, Unicode, default

from ..agent.service import AgentService
from ..aio import KeptTasks
from ..config import default_config_path, load_config
from ..federation import AGENT_KEY_VARS, Federation
from ..model import DiamondError, one_line
from ..script_body import MAX_BODY_BYTES, MAX_SCRIPT_BYTES
from ..sites_file_watch import SitesFileWatch
from .admin import (
    add_user_sites,
    allowed_site_names,
    check_settings,
    config_d_settings,
    pin_partitions,
    setting_overrides,
)
from .events import EventBridge, register_schemas
from .hub_env import hub_environment_problems, runs_as_hub_single_user
from .hub_stream import hub_checked_stream_route


def bound_hub_token_cache(identity_provider: Any, max_age_s: int) -> int | None:
    """Cap how long the single-user server caches the hub's answer for a token (JupyterHub's
    `HubOAuth.cache_max_age`, 0 being forever) at MAX_AGE_S; the bound in force, or None
    when the server is not JupyterHub's. One hub lookup per token per bound, not per
    request; an open event stream reads the same answer (server/hub_stream.py)."""
    hub_auth = getattr(identity_provider, "hub_auth", None)
    if hub_auth is None:
        return None
    bound = min(hub_auth.cache_max_age or max_age_s, max_age_s)
    if bound != hub_auth.cache_max_age:
        hub_auth.cache_max_age = bound
        hub_auth.cache = type(hub_auth.cache)(bound)  # made with the old age: made again
    return bound


class DiamondApp(ExtensionApp):
    name = "diamond_jupyter"
    description = "Run HPC jobs across several clusters from Jupyter"
    load_other_extensions = True

    sites_file = Unicode(
        help="The sites file (YAML). Default: $DIAMOND_CONFIG, else "
        "~/.config/diamond/sites.yaml.").tag(config=True)
    store_path = Unicode(
        None, allow_none=True,
        help="The SQLite store. Default: the sites file's `store`, else "
        "$DIAMOND_DATA_DIR/diamond.sqlite3 (shared with the CLI and kernels).").tag(config=True)
    poll_interval_s = Float(60.0, help="Safety-net scheduler poll interval (s).").tag(config=True)
    min_poll_s = Float(2.0, help="Shortest scheduler poll interval (s).").tag(config=True)
    store_poll_s = Float(
        2.0, help="How often to pick up events other processes (CLI, kernels) wrote to the "
        "store; 0 disables.").tag(config=True)
    allowed_sites = List(
        Unicode(), default_value=None, allow_none=True,
        help="Sites this user may use (None: every site in the sites file).").tag(config=True)
    allowed_partitions = Dict(
        key_trait=Unicode(), value_trait=List(Unicode()), default_value={},
        help="{site: [partition, ...]}: the only partitions each named site's jobs may go to "
        "(replaces that site's allowed_partitions in the sites file).").tag(config=True)
    user_sites_file = Unicode(
        "~/.config/diamond/user-sites.yaml",
        help="The user's own sites file (same format), read only when user_site_hosts "
        "allows some host.").tag(config=True)
    user_site_hosts = List(
        Unicode(), default_value=[],
        help="Host patterns (fnmatch, e.g. '*.partner.example.org') users may add their own "
        "SSH sites for in user_sites_file; empty: users add no sites.").tag(config=True)
    max_body_bytes = Int(
        MAX_BODY_BYTES, help="The largest REST request body accepted (bytes); larger ones "
        "get 413 before they are parsed or stored. The default takes a job script of the "
        f"largest size any face takes ({MAX_SCRIPT_BYTES} bytes) and 1 MB more for the "
        "rest of the body.").tag(config=True)
    hub_token_check_s = Int(
        5, min=1, max=300,
        help="Under JupyterHub, how long (s) the server trusts the hub's answer for a token "
        "or login cookie before asking the hub again: a token revoked at the hub is refused "
        "within this bound, and an event stream it opened is closed within it and a second; "
        "a stream is also closed once the hub has not answered for 12 bounds "
        "(JupyterHub's own default is 300). Lowers "
        "HubOAuth.cache_max_age, never raises it.").tag(config=True)
    login_prompt_timeout_s = Float(
        110.0, help="How long a site's one-time code prompt waits for the user's answer in "
        "the browser (s); keep it below the site's sshd LoginGraceTime.").tag(config=True)
    agent_approval = Enum(
        ["ask", "auto", "dry-run"], default_value="ask",
        help="The agent's approval policy when a request names none: 'ask' (every submit, "
        "cancel, transfer and fetch waits for the user's approval of its plan), 'auto' or "
        "'dry-run'.").tag(config=True)
    llm_provider = Unicode("anthropic", help="The agent's LLM provider.").tag(config=True)
    llm_model = Unicode("", help="The agent's model ('' = the provider's default).").tag(
        config=True)
    llm_base_url = Unicode(
        "", help="The model endpoint ('' = the provider's default; an OpenAI-compatible or "
        "Messages-API-compatible URL, e.g. a center's own models).").tag(config=True)
    llm_api_key_env = Unicode(
        "ANTHROPIC_API_KEY",
        help="Name of the environment variable holding the LLM API key. The key itself never "
        "reaches the browser, the events or the store.").tag(config=True)

    @default("sites_file")
    def _default_sites_file(self) -> str:
        return str(default_config_path())  # honours DIAMOND_CONFIG

    # -- life cycle -------------------------------------------------------------------------
    def _link_jupyter_server_extension(self, serverapp) -> None:  # noqa: ANN001
        """As ExtensionApp's, with each DiamondApp setting checked first: one that would be
        refused is taken out (traitlets stops at the first, leaving the rest unread and the
        extension on its defaults), and the engine then does not start: `state` says which
        and where. The others are given as the extension reads them, with those of
        `jupyter_server_config.d/*.json` files where nothing else sets them; a setting given
        in several places is logged, naming the one whose value is used."""
        dirs = list(serverapp.config_file_paths)
        from_d, self.refused_settings = config_d_settings(dirs)
        section = serverapp.config.DiamondApp
        for key, value in from_d.items():  # the command line and config files come first
            section.setdefault(key, value)
        for said in setting_overrides(list(section), sys.argv, dirs):
            serverapp.log.warning("diamond: %s", said)
        values, refused = check_settings(self, dict(section), sys.argv, dirs)
        self.refused_settings.update(refused)
        for key in refused:
            del section[key]
        section.update(values)
        super()._link_jupyter_server_extension(serverapp)

    def initialize_settings(self) -> None:
        self.federation: Federation | None = None
        self.agent: AgentService | None = None  # the agent over the federation (made lazily)
        self.error: str | None = None
        self.login_broker = None  # server.login.LoginBroker, made on the first login
        self._started: asyncio.Future | None = None
        self.background = KeptTasks()  # requests' background work (a snapshot refresh)
        self.refused_sites: list[str] = []  # the user's own sites the admin does not allow
        # the sites file as the engine read it (its federation's; kept here for a start
        # without a federation: a file created or mended since is said)
        self.sites_file_read = SitesFileWatch.now(self.sites_file, "Jupyter server")
        try:
            refused = getattr(self, "refused_settings", {})
            if refused:
                raise DiamondError("the admin's diamond settings are refused, so the engine "
                                   "is not started: " + "; ".join(refused.values()))
            cfg = load_config(self.sites_file)
            if self.store_path:
                cfg = cfg.model_copy(update={"store": self.store_path})
            cfg = pin_partitions(cfg, self.allowed_partitions)
            admin_allowed = allowed_site_names(cfg, self.allowed_sites, self.sites_file)
            cfg, mine, self.refused_sites = add_user_sites(cfg, self.user_sites_file,
                                                           self.user_site_hosts)
            for why in self.refused_sites:
                self.log.warning("diamond: user site not loaded: %s", one_line(why))
            allowed = None if admin_allowed is None else [*admin_allowed, *mine]
            self.federation = Federation(
                cfg, poll_interval_s=self.poll_interval_s, min_poll_s=self.min_poll_s,
                store_poll_s=self.store_poll_s or None, allowed_sites=allowed,
                use_login_holders=False, sites_file=self.sites_file_read,
                private_vars={*AGENT_KEY_VARS, *filter(None, [self.llm_api_key_env])})
            self.federation.server_root = Path(self.serverapp.root_dir).expanduser().resolve()
        except (DiamondError, OSError) as e:
            self.error = str(e)
            self.log.warning("diamond: not configured: %s", one_line(str(e)))
        # said before JupyterHub's own extension (loaded after this one) retries a bad URL
        hub_problems = hub_environment_problems(os.environ)
        for problem in hub_problems:
            self.log.error("diamond: the hub's environment: %s", problem)
        if hub_problems and runs_as_hub_single_user(self.serverapp):
            # JupyterHub's client would retry the URL until the hub's http_timeout (300 s);
            # exiting now fails the spawn at once. SystemExit passes the extension
            # manager, which swallows an Exception.
            self.log.critical("diamond: stopping the server: the hub's environment is "
                              "malformed (see above), so the hub could never reach it")
            self.serverapp.exit(1)
        bound_hub_token_cache(self.serverapp.identity_provider, self.hub_token_check_s)
        # Schemas first: a socket only receives the schemas registered when it opened.
        register_schemas(self.serverapp.event_logger)
        self.bridge = EventBridge(self.serverapp.event_logger)
        self.settings.update({"diamond_federation": self.federation, "diamond_app": self})

    def initialize_handlers(self) -> None:
        from .routes import routes

        self.handlers.extend(routes())
        self.handlers.extend(hub_checked_stream_route(self.serverapp.identity_provider))

    async def _start_jupyter_server_extension(self, serverapp) -> None:  # noqa: ARG002
        await self.ensure_started()

    async def ensure_started(self) -> Federation | None:
        """Start the Federation once, on the server's event loop (also lazily, from a
        request, where the server was started without its post-start hook)."""
        if self.federation is None:
            return None
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)
        return self.federation

    async def _start(self) -> None:
        assert self.federation is not None
        self.bridge.attach(self.federation)
        try:
            await self.federation.start(discover_sites=True)
        except DiamondError as e:  # recovery failed: keep serving; the reason is logged
            self.log.warning("diamond: recovery at start failed: %s", one_line(str(e)))
        if self.llm_api_key:  # re-arm agent tasks that were waiting when the server stopped
            from ..agent import LLMConfig

            llm = LLMConfig.from_env(provider=self.llm_provider or None,
                                     model=self.llm_model or None,
                                     api_key_env=self.llm_api_key_env or None,
                                     base_url=self.llm_base_url or None)
            await self.agent_service().start(llm)

    def agent_service(self) -> AgentService:
        """The server's agent (made on first use; its runner starts when a task needs it)."""
        assert self.federation is not None
        if self.agent is None:
            self.agent = AgentService(self.federation)
        return self.agent

    async def stop_extension(self) -> None:
        await self.background.close()
        self.bridge.detach()
        if self.agent is not None:
            await self.agent.close()
            self.agent = None
        if self.federation is not None:
            await self.federation.close()
        self._started = None

    @property
    def llm_api_key(self) -> str | None:
        """The key for the agent (server side only; never serialised)."""
        return os.environ.get(self.llm_api_key_env) if self.llm_api_key_env else None

    def agent_settings(self) -> dict[str, str]:
        """What the agent (and GET state) may know of the LLM setup: no key."""
        return {"provider": self.llm_provider, "model": self.llm_model,
                "base_url": self.llm_base_url,
                "api_key_env": self.llm_api_key_env,
                "api_key_set": str(bool(self.llm_api_key)).lower()}
