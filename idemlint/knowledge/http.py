"""HTTP: which methods change something on the server and which of those a repeat repeats;
the client libraries, what builds their clients, and the names that say a receiver is one."""

from __future__ import annotations

import re

# a name's last word that says it is (or makes) a web address: `base_url`, `urljoin`, `build_uri`,
# `api_endpoint`; not `path` or `link` (a file path, `ShortLink`), nor `during` or `security`
URL_WORD = re.compile(r"(^|_)(url|uri|endpoint)s?(_|$)|^urljoin$", re.IGNORECASE)
# a network address by name: `address`, `server_address` (not `address_book_id`)
ADDRESS_WORD = re.compile(r"(^|_)(address|addr)$", re.IGNORECASE)

# a value that is an HTTP status (`falcon.HTTP_204`, `status.HTTP_201_CREATED`, `HTTPStatus.OK`,
# `"204 No Content"`), set on a record named for a response (`resp`, `response`, `api_response`):
# a response's status, not a record's state
HTTP_STATUS_VALUE = re.compile(r"(^|\.)HTTP_\d{3}(_[A-Z_]+)?$|(^|\.)HTTPStatus\.\w+$|^[1-5]\d\d [A-Z]")
RESPONSE_NAME = re.compile(r"(^|_)(resp|response)$")


def is_response_status(record: str | None, value: str) -> bool:
    """`resp.status = falcon.HTTP_204`: an HTTP status set on a record named for a response."""
    return bool(RESPONSE_NAME.search(record or "") and HTTP_STATUS_VALUE.search(value))


# the methods that change something on the server (upper case, as a request names them)
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# the methods that only read (RFC 9110 9.2.1, safe methods)
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# of those, the ones a second identical request can apply twice (PUT and DELETE are
# idempotent by definition, RFC 9110 9.2.2)
NOT_IDEMPOTENT_METHODS = frozenset({"POST", "PATCH"})

# errors raised before a request left the client: a connection refused or never made, so a
# retry of these alone re-sends nothing the server saw
UNSENT_REQUEST_ERRORS = frozenset(
    {
        "httpx.ConnectError",
        "httpx.ConnectTimeout",
        "requests.ConnectTimeout",
        "requests.exceptions.ConnectTimeout",
        "aiohttp.ClientConnectorError",
        "aiohttp.client_exceptions.ClientConnectorError",
    }
)
# Statuses by which the server says it turned the request away before acting on it (Too Many
# Requests): a request sent again only after one of these cannot do its work twice.
REFUSED_STATUSES = frozenset({"429"})
# What a function or value that reads a refusal is named: `_handle_rate_limit(exception)`,
# `retry_after`, `throttled`: a server that says "later" did nothing this time.
RATE_LIMIT_WORDS = re.compile(r"rate_?limit|throttl|retry_?after|too_?many_?requests", re.I)
# Writes that a repeat leaves as the first one left them, whatever the method says: the words
# of an endpoint's path (`/users/unlink/`, `/orders/_search`) or of the function that calls
# it (`revoke_token()`, `search_documents()`): removals, revocations, a cache's purge, and POSTs that only
# read. Not "remove" or "delete" alone in a function's name: `remove_funds` acts.
REPEAT_SAFE_ENDPOINT_WORDS = frozenset(
    {"unlink", "revoke", "deactivate", "unsubscribe", "unassign", "disable", "purge", "search", "lookup", "validate"}
    | {"preview", "estimate", "exists"}
)
# The last part of a path whose request only answers, changing nothing on the server (so a
# timeout there hides no effect): a search, a lookup, an existence test, OAuth's token
# introspection (RFC 7662). Not `validate` or `estimate`, which some APIs act on (an invoice
# validated, a quote made).
ANSWERING_ENDPOINT_WORDS = frozenset({"search", "lookup", "exists", "introspect"})
# An RPC path's last part that is one verb of a computation answering and keeping nothing:
# `/predict`, `/translate`, `/embed`; a repeat costs a second answer, it makes nothing twice.
# The whole last part (not a host, a query's `?embed=`, `/batch_predict`, `/async-inference`,
# nor a function's name: `embed_and_store` may store), and a verb, not a noun a server may
# keep rows of (`/rest/v1/embeddings` inserts a row, Replicate's `/v1/predictions` makes a
# billed prediction, a vault's `/tokenize` a stored token)
COMPUTATION_ENDPOINT_WORDS = frozenset({"predict", "translate", "embed", "classify", "rerank", "infer", "inference"})
# What a server answers a create it has made already, by which code that goes on takes the
# create as done (create-if-absent): 409 Conflict, by number or by name (`HTTPStatus.CONFLICT`,
# `ALREADY_EXISTS`), an error class named for it (`AlreadyExists`, `ResourceExistsError`,
# `DuplicateKeyError`), the words of its message ("already exists", "duplicate"). Not a name
# that says the thing is missing (`DoesNotExist`, "does not exist").
DUPLICATE_ANSWER_STATUS = 409
DUPLICATE_ANSWER_WORDS = frozenset({"already", "duplicate", "duplicated", "conflict", "conflicts"})
EXISTS_WORDS = frozenset({"exist", "exists"})
MISSING_WORDS = frozenset({"not", "no", "doesn", "nonexistent"})
# the words of a function named for making one thing (`add_user`, `create_member`): the only kind
# a duplicate answer speaks for when it comes back through the function (`onboard()`, which may
# also send a welcome, is not one)
CREATE_WORDS = frozenset({"create", "add", "register", "insert", "make", "new", "provision", "enroll", "invite"})
# a PATCH body key that changes a value by an amount or an operation (`{"delta": 5}`, JSON
# Patch's `op`) rather than setting it: without one, a PATCH of literal fields is absolute
RELATIVE_CHANGE_KEY = re.compile(r"delta|incr|decr|append|push|adjust|^add|^op$|_by$", re.IGNORECASE)
# the module-level functions and client methods named for a writing method (`requests.post`)
WRITE_METHOD_FUNCTIONS = frozenset(method.lower() for method in WRITE_METHODS)
# modules whose functions send a request (`requests.post`)
HTTP_MODULES = ("requests", "httpx", "requests.api", "httpx._api", "niquests")
# what builds a client, and the library it belongs to
CLIENT_FACTORIES = {
    "requests.Session": "requests",
    "requests.session": "requests",
    "requests.sessions.Session": "requests",
    "httpx.Client": "httpx",
    "httpx.AsyncClient": "httpx",
    "aiohttp.ClientSession": "aiohttp",
    "niquests.Session": "niquests",
    "niquests.AsyncSession": "niquests",
    "urllib3.PoolManager": "urllib3",
    "urllib3.HTTPConnectionPool": "urllib3",
    "urllib3.HTTPSConnectionPool": "urllib3",
    "urllib3.connection_from_url": "urllib3",
}
# a receiver whose type is unknown is an HTTP client only when its name says so
CLIENT_NAME = re.compile(
    r"(^|_)(session|sess|client|http|https|api|httpx|requests|http_client|api_client|rest)$", re.IGNORECASE
)
# ... but not a store's client, whose `get` reads a key, not a resource (`redis_client.get(k)`)
NOT_AN_HTTP_CLIENT = re.compile(r"(^|_)(redis|cache|memcache|kv|store|storage|db)(_|$)", re.IGNORECASE)
# the effect libraries whose requests go through urllib3, so a mounted `Retry(...)` adapter may
# retry them ("http": a client known only by its name, which may be a requests session)
URLLIB3_BACKED = frozenset({"requests", "urllib3", "http"})
# what `urlopen()` raises itself for every answer of 400 and up
URLLIB_STATUS_ERRORS = frozenset({"urllib.error.HTTPError", "urllib.request.HTTPError"})
# what `raise_for_status()` raises, for a 4xx as well as a 5xx, and urllib's
HTTP_STATUS_ERRORS = {
    "requests.HTTPError",
    "requests.exceptions.HTTPError",
    "httpx.HTTPStatusError",
    "niquests.HTTPError",
    *URLLIB_STATUS_ERRORS,
}
# the method that raises one of those for a response with a failure status
RAISES_STATUS_ERROR = "raise_for_status"
# calls that raise one themselves for a failure status, no method needed: how a message names each
RAISE_ON_STATUS = {"urllib.request.urlopen": "urlopen()"}


def status_error_raiser(status_class: str) -> str:
    """How a message names what raises the status error `status_class`."""
    return "urlopen()" if status_class in URLLIB_STATUS_ERRORS else f"{RAISES_STATUS_ERROR}()"


# the classes a status error is also caught as: its client's base classes (requests' is an
# `OSError` too, httpx's is not, so `except OSError:` is not taken to end one)
HTTP_STATUS_ERROR_BASES = {
    "requests.RequestException",
    "requests.exceptions.RequestException",
    "httpx.HTTPError",
    "niquests.RequestException",
    "niquests.exceptions.RequestException",
}
# what only a request that got no answer raises: a timeout, a refused or dropped connection
TRANSPORT_ERRORS = re.compile(r"^\w*(Timeout|ConnectionError|ConnectError)$")
# the names of exceptions a network call raises when the other side did not answer as hoped
# (a retry may help): connection and timeout errors, any error of an HTTP client or a socket
NETWORK_ERRORS = re.compile(
    r"Connection|Timeout|"
    + "|".join(re.escape(package + ".") for package in sorted(set(CLIENT_FACTORIES.values())))
    + r"|socket\.|HTTP|Transport|Network|ProtocolError|RemoteDisconnected|OperationalError"
)
# raw sockets: what makes one, and the calls that send on it. A protocol idemlint cannot read
# carries no idempotency key it can see: a send is a side effect without one.
SOCKET = "socket"
SOCKET_FACTORIES = {"socket.socket": SOCKET, "socket.create_connection": SOCKET, "socket.fromfd": SOCKET}
SOCKET_SENDS = frozenset({"send", "sendall", "sendto", "sendmsg"})

# response headers that say when a throttled client may come back (`X-RateLimit-Reset`,
# `Retry-After`): a 403 branch that reads one treats the 403 as a throttle (GitHub's)
THROTTLE_HEADER = re.compile(r"^(x-)?rate[-_]?limit[-_]reset$|^retry[-_]after$", re.IGNORECASE)
THROTTLE_STATUS = 403
# answers that ask for (new) credentials: a retry after renewing them can succeed
AUTH_STATUSES = frozenset({401, 407})
# ... as written in code: the numbers, and the names libraries give them (`requests.codes.unauthorized`,
# `HTTPStatus.UNAUTHORIZED`, `status.HTTP_401_UNAUTHORIZED`), lower-cased
AUTH_STATUS_TEXTS = frozenset(str(code) for code in AUTH_STATUSES)
AUTH_STATUS_NAMES = frozenset(
    {"unauthorized", "http_401_unauthorized", "proxy_authentication_required", "http_407_proxy_authentication_required"}
)

# a request object built before it is sent (`client.send(request)`): its method is its own,
# set by whoever built it
HTTP_REQUEST_TYPES = frozenset(
    {"httpx.Request", "requests.PreparedRequest", "requests.Request", "requests.models.PreparedRequest"}
)
# ... and the names an unannotated parameter holding one goes by
REQUEST_PARAMETER_NAMES = frozenset({"request", "req", "prepared", "prepared_request", "http_request"})
# the attribute of an options object that holds a request's HTTP method (`options.method`)
METHOD_ATTRIBUTES = frozenset({"method", "http_method", "verb", "request_method"})
# the field an answer's HTTP status is read from (`r.status_code`, `exc.status`, `e.code`)
STATUS_FIELDS = frozenset({"status", "status_code", "http_status", "statuscode", "code", "status_int", "response_code"})
# answers that say another writer won (a version or precondition conflict), as written
LOST_RACE_STATUSES = frozenset({"409", "412"})

# the standard library's openers of an address: a GET unless given a body or a `Request`
URL_OPENERS = frozenset({"urllib.request.urlopen", "urllib2.urlopen", "urllib.urlopen"})
