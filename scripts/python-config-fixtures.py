"""Builds test/fixtures/python-config/{template,every-key,schema-keys}.json from the Python
nanobot's own schema (HKUDS/nanobot: nanobot/config/schema.py and the tool config classes).

Usage: python3 scripts/python-config-fixtures.py <path to an HKUDS/nanobot checkout> <out dir>
Needs pydantic and pydantic-settings; the nanobot modules' other imports are stubbed.
every-key.json is validated by the Python Config before it is written, so it is a config the
Python nanobot itself accepts.
"""
import importlib.abc
import importlib.machinery
import json
import sys
import typing
from unittest.mock import MagicMock

src, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)


class _Stub(importlib.abc.Loader):
    def create_module(self, spec):
        m = MagicMock()
        m.__path__, m.__name__, m.__spec__ = [], spec.name, spec
        return m

    def exec_module(self, module):
        pass


class _StubMissing(importlib.abc.MetaPathFinder):
    """Third-party modules the schema's import chain names but does not need (loguru, httpx…)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "nanobot":
            return None
        for finder in sys.meta_path:
            if finder is not self and getattr(finder, "find_spec", None) and finder.find_spec(name, path, target):
                return None
        return importlib.machinery.ModuleSpec(name, _Stub(), is_package=True)


sys.meta_path.append(_StubMissing())
from pydantic import BaseModel  # noqa: E402
from nanobot.config.schema import Config  # noqa: E402


def alias(model, name):
    field = model.model_fields[name]
    return field.serialization_alias or field.alias or name


def model_of(annotation):
    """The model a field holds (directly, or as dict values / list items), and how."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    if origin is dict:
        inner, _ = model_of(typing.get_args(annotation)[1])
        return (inner, "*") if inner else (None, "")
    return None, ""


def keys(model, prefix=()):
    for name, field in model.model_fields.items():
        if field.exclude is True:
            continue
        path = (*prefix, alias(model, name))
        inner, how = model_of(field.annotation)
        if inner is None:
            yield ".".join(path)
        else:
            yield from keys(inner, (*path, "*") if how else path)


template = Config().model_dump(mode="json", by_alias=True)
schema_keys = sorted(set(keys(Config)))
# Every provider under `providers` is a ProviderConfig (bedrock adds two keys): `providers.*.<key>`.
schema_keys = sorted({"providers.*." + k.split(".", 2)[2] if k.startswith("providers.") else k for k in schema_keys})

every = json.loads(json.dumps(template))
d = every["agents"]["defaults"]
d.update(
    {
        "modelPreset": "fast", "model": "custom/test-model", "provider": "custom", "maxTokens": 4096,
        "contextWindowTokens": 100000, "contextBlockLimit": 60000, "temperature": 0.3,
        "fallbackModels": ["careful", {"model": "test-fallback", "provider": "custom", "maxTokens": 1024,
                                       "contextWindowTokens": 32000, "temperature": 0.2, "reasoningEffort": "low"}],
        "maxToolIterations": 40, "maxConcurrentSubagents": 2, "failOnToolError": False, "maxToolResultChars": 8000,
        "providerRetryMode": "persistent", "toolHintMaxLength": 60, "reasoningEffort": "medium",
        "timezone": "Asia/Shanghai", "timezoneMode": "manual", "botName": "nanocat", "botIcon": "🤖",
        "unifiedSession": True, "disabledSkills": ["summarize"], "idleCompactAfterMinutes": 30,
        "idleCompactCheckIntervalSeconds": 30, "consolidationRatio": 0.6,
        "dream": {"enabled": True, "intervalH": 4, "cron": "0 3 * * *", "modelOverride": "careful"},
    }
)
every["channels"].update(
    {"sendProgress": False, "sendToolHints": False, "showReasoning": False, "extractDocumentText": False,
     "sendMaxRetries": 5, "transcriptionProvider": "openai", "transcriptionLanguage": "en",
     "discord": {"enabled": False, "token": ""}}
)
every["transcription"] = {"enabled": True, "provider": "groq", "model": "whisper-large-v3", "language": "en",
                          "maxDurationSec": 60, "maxUploadMb": 10}
every["providers"]["custom"] = {
    "apiKey": "sk-python-every-key-0001", "apiBase": "http://127.0.0.1:9/v1", "apiType": "auto",
    "extraHeaders": {"X-Team": "core"}, "extraBody": {"top_k": 20}, "extraQuery": {"api-version": "2024-10-21"},
    "proxy": "http://127.0.0.1:3128", "thinkingStyle": "enable_thinking",
}
every["providers"]["openai"]["apiType"] = "responses"
every["providers"]["bedrock"].update({"region": "eu-west-1", "profile": "work"})
every["providers"]["lazyllm"] = {"displayName": "Lazy LLM", "apiKey": "sk-lazy-0001", "apiBase": "http://127.0.0.1:9/v1"}
every["api"] = {"host": "0.0.0.0", "port": 8901, "timeout": 60.0, "apiKey": "sk-api-every-key-0001"}
every["gateway"] = {"host": "127.0.0.1", "port": 18791, "restartMode": "exit",
                    "heartbeat": {"enabled": False, "intervalS": 900, "keepRecentMessages": 4}}
t = every["tools"]
t["web"] = {"enable": True, "proxy": "http://127.0.0.1:3128", "userAgent": "MyBot/1.0",
            "search": {"provider": "searxng", "apiKey": "", "baseUrl": "http://127.0.0.1:8888", "maxResults": 3, "timeout": 10},
            "fetch": {"useJinaReader": False}}
t["exec"] = {"enable": True, "timeout": 30, "pathPrepend": "/opt/tools/bin", "pathAppend": "/opt/extra/bin", "sandbox": "",
             "sandboxRoBinds": ["/opt/data"], "sandboxRwBinds": ["/srv/scratch"], "allowedEnvKeys": ["LANG"],
             "allowPatterns": ["^git "], "denyPatterns": ["rm -rf /"]}
t["file"] = {"enable": False}
t["cliApps"] = {"enable": True, "installTimeout": 600, "runTimeout": 120, "catalogTtlSeconds": 7200}
t["my"] = {"enable": True, "allowSet": True}
t["imageGeneration"] = {"enabled": True, "provider": "openrouter", "model": "openai/gpt-5.4-image-2", "defaultAspectRatio": "16:9",
                        "defaultImageSize": "2K", "maxImagesPerTurn": 2, "saveDir": "images"}
t.update({"maxSessionMessagesPerMinute": 3, "restrictToWorkspace": True, "webuiAllowLocalServiceAccess": False,
          "webuiAllowRemotePackageInstall": True, "ssrfWhitelist": ["100.64.0.0/10"]})
t["mcpServers"] = {
    "files": {"type": "stdio", "auth": None, "command": "node", "args": ["server.js"], "env": {"LOG": "1"}, "cwd": "/tmp",
              "url": "", "headers": {}, "toolTimeout": 45, "enabledTools": ["read"]},
    "remote": {"type": "streamableHttp", "auth": "oauth", "command": "", "args": [], "env": {}, "cwd": "",
               "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}, "toolTimeout": 30, "enabledTools": ["*"]},
}
every["modelPresets"] = {
    "fast": {"model": "test-fast", "provider": "custom", "maxTokens": 2048, "contextWindowTokens": 64000, "temperature": 0.5, "reasoningEffort": "low"},
    "careful": {"model": "test-careful", "provider": "custom", "maxTokens": 16000, "contextWindowTokens": 200000, "temperature": 0.0, "reasoningEffort": "high"},
}

Config.model_validate(every)  # the Python nanobot accepts it


def has(doc, parts):
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    if not isinstance(doc, dict):
        return False
    if head == "*":
        return any(has(v, rest) for v in doc.values())
    return head in doc and has(doc[head], rest)


absent = [k for k in schema_keys if not has(every, k.split("."))]
if absent:
    raise SystemExit(f"every-key.json lacks {absent}")
for name, doc in (("template", template), ("every-key", every), ("schema-keys", schema_keys)):
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
print(len(schema_keys), "schema keys")
