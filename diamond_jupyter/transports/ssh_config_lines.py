"""One ssh_config line as OpenSSH reads it, before paramiko does: a trailing `# comment`
taken off, a misspelt keyword and a one-value keyword given more values refused, naming
the file and the line (OpenSSH refuses both; paramiko took the typo as a keyword of its
own, and the extra words as part of the value)."""

from __future__ import annotations

import difflib
import fnmatch
import re
import shlex
from pathlib import Path

from ..model import BadInput, visible

# ssh_config(5)'s keywords (OpenSSH 9 and 10), with Apple's UseKeychain, Debian's aliases
# (ProtocolKeepAlives, SetupTimeOut) and the obsolete ones ssh still reads, warns of or
# passes over; written as OpenSSH's manual spells them
_KEYWORD_NAMES = """
    Host Match AddKeysToAgent AddressFamily BatchMode BindAddress BindInterface
    CanonicalDomains CanonicalizeFallbackLocal CanonicalizeHostname CanonicalizeMaxDots
    CanonicalizePermittedCNAMEs CASignatureAlgorithms CertificateFile ChannelTimeout
    CheckHostIP Ciphers ClearAllForwardings Compression ConnectionAttempts ConnectTimeout
    ControlMaster ControlPath ControlPersist DynamicForward EnableEscapeCommandline
    EnableSSHKeysign EscapeChar ExitOnForwardFailure FingerprintHash ForkAfterAuthentication
    ForwardAgent ForwardX11 ForwardX11Timeout ForwardX11Trusted GatewayPorts
    GlobalKnownHostsFile GSSAPIAuthentication GSSAPIDelegateCredentials GSSAPIKeyExchange
    GSSAPIClientIdentity GSSAPIServerIdentity GSSAPIRenewalForcesRekey GSSAPITrustDns
    GSSAPIKexAlgorithms HashKnownHosts HostbasedAcceptedAlgorithms HostbasedAuthentication
    HostbasedKeyTypes HostKeyAlgorithms HostKeyAlias HostName IdentitiesOnly IdentityAgent
    IdentityFile IgnoreUnknown Include IPQoS KbdInteractiveAuthentication
    KbdInteractiveDevices KexAlgorithms KnownHostsCommand LocalCommand LocalForward LogLevel
    LogVerbose MACs NoHostAuthenticationForLocalhost NumberOfPasswordPrompts
    ObscureKeystrokeTiming PasswordAuthentication PermitLocalCommand PermitRemoteOpen
    PKCS11Provider Port PreferredAuthentications ProxyCommand ProxyJump ProxyUseFdpass
    PubkeyAcceptedAlgorithms PubkeyAcceptedKeyTypes PubkeyAuthentication RekeyLimit
    RemoteCommand RemoteForward RequestTTY RequiredRSASize RevokedHostKeys
    SecurityKeyProvider SendEnv ServerAliveCountMax ServerAliveInterval SessionType SetEnv
    StdinNull StreamLocalBindMask StreamLocalBindUnlink StrictHostKeyChecking SyslogFacility
    TCPKeepAlive Tag Tunnel TunnelDevice UpdateHostKeys User UserKnownHostsFile
    VerifyHostKeyDNS VisualHostKey XAuthLocation UseKeychain ChallengeResponseAuthentication
    Cipher CompressionLevel Protocol RSAAuthentication RhostsRSAAuthentication
    UsePrivilegedPort UseRoaming UseBlacklistedKeys FallBackToRsh UseRsh GSSAPIEnableMITMAttack
    RefuseConnection WarnWeakCrypto VersionAddendum KeepAlive DSAAuthentication
    SkeyAuthentication TISAuthentication GlobalKnownHostsFile2 UserKnownHostsFile2
    IdentityFile2 RhostsAuthentication AFSTokenPassing KerberosAuthentication
    KerberosTGTPassing SmartcardDevice ProtocolKeepAlives SetupTimeOut
    """
KEYWORDS = {k.lower(): k for k in _KEYWORD_NAMES.split()}

# keywords that take one value, which the engine reads (more values: refused, as ssh does)
ONE_VALUE = ("hostname", "port", "user", "hostkeyalias", "identityfile", "certificatefile",
             "identityagent", "proxyjump", "revokedhostkeys", "identitiesonly", "ignoreunknown")


def ignore_patterns(rest: str) -> list[str]:
    """The patterns of an IgnoreUnknown line's value `rest`: one comma list, quoted or not
    (`"UseKeychain,AddKeysToAgent"` was read as the patterns `"UseKeychain` and
    `AddKeysToAgent"`)."""
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    return [x for w in words for x in w.split(",") if x]


def is_ignored(word: str, patterns: list[str]) -> bool:
    """Whether IgnoreUnknown `patterns` name keyword `word`, as ssh matches a pattern list:
    without regard to case, and a `!pattern` that matches keeping it unnamed."""
    word = word.lower()
    if any(p.startswith("!") and fnmatch.fnmatchcase(word, p[1:].lower()) for p in patterns):
        return False
    return any(not p.startswith("!") and fnmatch.fnmatchcase(word, p.lower()) for p in patterns)


def without_comment(line: str) -> str:
    """`Port 2222  # the alt port` as `Port 2222`: a `#` starting a word outside double
    quotes ends the line, as OpenSSH (8.7 on) reads it."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip()
    return line


def check_line(path: Path, n: int, word: str, written: str, rest: str,
               ignored: list[str]) -> None:
    """Refuse line `n` of ssh_config `path` (keyword `written`, lowered `word`, its values
    `rest`) when ssh would: a keyword it does not know that no IgnoreUnknown line above it
    names (a typo close to a known one is said so: the setting was silently not applied), or
    a one-value keyword given several. `ignored`: the IgnoreUnknown patterns so far."""
    where = f"ssh_config {path} line {n}"
    if word not in KEYWORDS:
        if is_ignored(word, ignored):
            return
        shown = visible(written)[:60]
        close = difflib.get_close_matches(word, list(KEYWORDS), n=1, cutoff=0.8)
        if close:
            raise BadInput(f"{where}: {shown!r} is not an ssh_config keyword (did you mean "
                           f"{KEYWORDS[close[0]]}?); ssh refuses the file too (Bad "
                           "configuration option)")
        raise BadInput(f"{where}: {shown!r} is not an ssh_config keyword, and ssh refuses the "
                       "file too (Bad configuration option); remove the line or, if it is "
                       "another ssh's (Apple's, a newer OpenSSH), name it in an IgnoreUnknown "
                       f"line above it (IgnoreUnknown {shown})")
    _check_value(where, word, rest)
    if word not in ONE_VALUE:
        return
    try:
        values = shlex.split(rest)
    except ValueError:
        return  # an unclosed quote: paramiko says so
    if len(values) > 1:
        name = KEYWORDS[word]
        how = "patterns are one list with commas: IgnoreUnknown " + ",".join(values) \
            if word == "ignoreunknown" else "put a value holding blanks in double quotes"
        raise BadInput(f"{where}: {name} takes one value, and {visible(rest)[:100]!r} is "
                       f"{len(values)}; {visible(how)[:200]}, or start a comment with ` #` "
                       "(ssh refuses the line too: extra arguments at end of line)")


# values ssh checks while reading a line (whichever host it is for): the keyword's accepted
# forms, as its refusal says them
_TIME = re.compile(r"^(?:[0-9]+[smhdwSMHDW]?)+$")
_VALUE_FORMS: dict[str, tuple[re.Pattern[str], str]] = {
    "serveraliveinterval": (_TIME, "seconds, or a time like 30s, 5m, 1h30m"),
    "connecttimeout": (_TIME, "seconds, or a time like 30s, 5m, 1h30m"),
    "serveralivecountmax": (re.compile(r"^[0-9]+$"), "a whole number of unanswered probes"),
    "canonicalizemaxdots": (re.compile(r"^[0-9]+$"), "a whole number of dots"),
    "canonicalizehostname": (re.compile(r"^(?i:yes|no|true|false|always)$"),
                             "yes, no or always"),
    "canonicalizefallbacklocal": (re.compile(r"^(?i:yes|no|true|false)$"), "yes or no"),
}


def _check_value(where: str, word: str, rest: str) -> None:
    """Refuse a value ssh refuses for `word` (its refusal named too): a keepalive interval
    of `thirty`, `SetEnv` without `NAME=value`, `CanonicalizeHostname maybe`."""
    try:
        values = shlex.split(rest)
    except ValueError:
        return  # an unclosed quote: paramiko says so
    name = KEYWORDS.get(word, word)
    if word == "setenv":
        bad = next((v for v in values if "=" not in v or v.startswith("=")), None)
        if bad is not None:
            raise BadInput(f"{where}: SetEnv takes NAME=value words, and "
                           f"{visible(bad)[:60]!r} is not one (quote a value holding blanks: "
                           '"NAME=a b"); ssh refuses the line too (Invalid SetEnv)')
        return
    form = _VALUE_FORMS.get(word)
    if form is None or not values:
        return
    if len(values) > 1:
        raise BadInput(f"{where}: {name} takes one value, and {visible(rest)[:60]!r} is "
                       f"{len(values)}: it takes {form[1]}; ssh refuses the line too (extra "
                       "arguments at end of line)")
    if not form[0].match(values[0]):
        raise BadInput(f"{where}: {name} {visible(values[0])[:60]!r} is not accepted: it takes "
                       f"{form[1]}; ssh refuses the line too")
