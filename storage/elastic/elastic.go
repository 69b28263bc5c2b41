// Package elastic is Lectern's thin client for Elasticsearch 8: it creates the indices that
// package mappings defines (versioned, behind a read alias, under a per-deployment prefix),
// reports cluster health, and translates transport and HTTP errors into this package's
// sentinels at the edge, so callers test errors with errors.Is and never look at status codes.
//
// Everything else (indexing, search) goes through Do with a request of the official client's
// esapi package, or through Raw.
package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/storage"
)

// Sentinel errors, possibly wrapped; test them with errors.Is.
var (
	// ErrUnavailable means Elasticsearch could not be reached or could not serve the request
	// now (connection failure, 429, 502, 503, 504); trying again later may succeed.
	// It is a *storage.UnavailableError, so it also matches storage.ErrUnavailable.
	ErrUnavailable error = &storage.UnavailableError{Backend: "elasticsearch"}
	// ErrNotFound means the index, alias or document does not exist (HTTP 404).
	ErrNotFound = errors.New("elasticsearch: not found")
)

// Error is an error response of Elasticsearch. It unwraps to ErrNotFound for 404 and to
// ErrUnavailable for 429, 502, 503 and 504.
type Error struct {
	// Op says what was being done, such as "create index lectern_content_v1".
	Op string
	// Status is the HTTP status code.
	Status int
	// Type is Elasticsearch's error type, such as "resource_already_exists_exception"; empty
	// when the body had none.
	Type string
	// Reason is Elasticsearch's explanation, or the start of the body when it had none.
	Reason string
}

// Error returns a one-line description with the operation, status, type and reason.
func (e *Error) Error() string {
	s := fmt.Sprintf("elastic: %s: HTTP %d", e.Op, e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the sentinels that match the status. A missing index
// (index_not_found_exception) is both ErrNotFound and an outage (a *storage.UnavailableError
// naming the index): callers that recover recreate the index, and a request that reaches
// the HTTP layer answers 503 naming it rather than 500, as for any backend that cannot serve.
func (e *Error) Unwrap() []error {
	switch e.Status {
	case http.StatusNotFound:
		if e.Type == "index_not_found_exception" {
			return []error{ErrNotFound, &storage.UnavailableError{Backend: "elasticsearch index " + missingIndex(e.Reason)}}
		}
		return []error{ErrNotFound}
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout:
		return []error{ErrUnavailable}
	}
	return nil
}

// missingIndex returns the index name in an index_not_found_exception's reason ("no such
// index [name]"), or "(missing)" when it names none.
func missingIndex(reason string) string {
	i := strings.Index(reason, "[")
	j := strings.Index(reason, "]")
	if i < 0 || j <= i+1 {
		return "(missing)"
	}
	return reason[i+1 : j]
}

// Config configures a Client.
type Config struct {
	// URLs are the base URLs of the cluster's nodes, such as "http://127.0.0.1:9200".
	URLs []string
	// IndexPrefix is put before every index and alias name, so that deployments (and tests)
	// can share a cluster: with "lectern_", the content alias is "lectern_content". Lower
	// case letters, digits, '_', '-' and '.', not starting with '_', '-' or '.'; may be empty.
	IndexPrefix string
	// Username and Password, when Username is set, authenticate with HTTP Basic auth.
	Username string
	// Password is the password of Username.
	Password string
}

// Client talks to one Elasticsearch cluster. It is safe for concurrent use.
type Client struct {
	es     *elasticsearch.Client
	prefix string
}

var prefixRE = regexp.MustCompile(`^([a-z0-9][a-z0-9._-]*)?$`)

// New returns a client for the cluster at cfg.URLs. It does not contact the cluster; use
// Ping or Health to check that it answers.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("elastic: no URLs configured")
	}
	if !prefixRE.MatchString(cfg.IndexPrefix) {
		return nil, fmt.Errorf("elastic: invalid index prefix %q", cfg.IndexPrefix)
	}
	es, err := elasticsearch.NewClient(elasticsearch.Config{
		Addresses: cfg.URLs,
		Username:  cfg.Username,
		Password:  cfg.Password,
	})
	if err != nil {
		return nil, fmt.Errorf("elastic: %w", err)
	}
	return &Client{es: es, prefix: cfg.IndexPrefix}, nil
}

// Raw returns the underlying official client, for requests this package has no method for.
// Its errors are not translated; prefer Do.
func (c *Client) Raw() *elasticsearch.Client { return c.es }

// Prefix returns the configured index prefix.
func (c *Client) Prefix() string { return c.prefix }

// Alias returns the read alias of the named index definition: the prefix and the name, such
// as "lectern_content". Searches and writes go through it.
func (c *Client) Alias(name string) string { return c.prefix + name }

// Index returns the concrete index of the named definition at its current version: the
// prefix and mappings.Versioned(name), such as "lectern_content_v1". It panics for a name
// package mappings does not define.
func (c *Client) Index(name string) string { return c.prefix + mappings.Versioned(name) }

// Do performs req and, on a 2xx answer, decodes the JSON body into out unless out is nil.
// Any other answer becomes an *Error, a transport failure an error wrapping ErrUnavailable,
// and a done ctx an error wrapping ctx.Err(). op names the operation in errors.
func (c *Client) Do(ctx context.Context, op string, req esapi.Request, out any) error {
	res, err := req.Do(ctx, c.es)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("elastic: %s: %w", op, ctx.Err())
		}
		return fmt.Errorf("elastic: %s: %w: %w", op, ErrUnavailable, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("elastic: %s: %w", op, ctx.Err())
		}
		return fmt.Errorf("elastic: %s: read response: %w: %w", op, ErrUnavailable, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return responseError(op, res.StatusCode, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("elastic: %s: decode response: %w", op, err)
	}
	return nil
}

// responseError builds an *Error from a non-2xx answer.
func responseError(op string, status int, body []byte) *Error {
	e := &Error{Op: op, Status: status}
	var parsed struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &parsed) == nil && len(parsed.Error) > 0 {
		var detail struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(parsed.Error, &detail) == nil && detail.Type != "" {
			e.Type, e.Reason = detail.Type, detail.Reason
			return e
		}
		var msg string
		if json.Unmarshal(parsed.Error, &msg) == nil {
			e.Reason = msg
			return e
		}
	}
	e.Reason = strings.TrimSpace(string(body))
	if len(e.Reason) > 300 {
		e.Reason = e.Reason[:300] + "…"
	}
	return e
}

// Health is the cluster's health as _cluster/health reports it.
type Health struct {
	// Status is "green", "yellow" or "red".
	Status string `json:"status"`
	// ClusterName is the cluster's name.
	ClusterName string `json:"cluster_name"`
	// NumberOfNodes counts the nodes in the cluster.
	NumberOfNodes int `json:"number_of_nodes"`
	// ActivePrimaryShards counts the active primary shards.
	ActivePrimaryShards int `json:"active_primary_shards"`
	// ActiveShards counts the active shards, primaries and replicas.
	ActiveShards int `json:"active_shards"`
	// UnassignedShards counts the shards assigned to no node.
	UnassignedShards int `json:"unassigned_shards"`
}

// Health returns the cluster's health. A red cluster is reported, not returned as an error.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.Do(ctx, "cluster health", esapi.ClusterHealthRequest{}, &h)
	return h, err
}

// Ping checks that the cluster answers, whatever its health. (It does not use "GET /",
// which a cluster without the rest-root module rejects.)
func (c *Client) Ping(ctx context.Context) error {
	return c.Do(ctx, "ping", esapi.ClusterHealthRequest{FilterPath: []string{"status"}}, nil)
}

// EnsureIndex makes sure the named definition's index exists at its current version, and
// that its read alias exists. It creates the index Index(name) from mappings.Render(name,
// opts) when absent, and points the alias Alias(name) at it when no alias of that name exists
// yet; an alias that already points elsewhere (at an older version) is left alone, since
// moving it is a migration's job. It returns the concrete index name and whether this call
// created the index. It is idempotent and safe to run concurrently.
func (c *Client) EnsureIndex(ctx context.Context, name string, opts mappings.Options) (index string, created bool, err error) {
	if _, ok := mappings.Lookup(name); !ok {
		return "", false, fmt.Errorf("elastic: no index definition named %q", name)
	}
	body, err := mappings.Render(name, opts)
	if err != nil {
		return "", false, fmt.Errorf("elastic: %w", err)
	}
	index = c.Index(name)
	err = c.Do(ctx, "create index "+index, esapi.IndicesCreateRequest{Index: index, Body: bytes.NewReader(body)}, nil)
	var e *Error
	switch {
	case err == nil:
		created = true
	case errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Type == "resource_already_exists_exception":
		// Another process may have created it a moment ago and its primary shards may not be
		// allocated yet: a search or write now would fail, so wait as the creator's request did.
		err := c.Do(ctx, "wait for index "+index, esapi.ClusterHealthRequest{Index: []string{index},
			WaitForStatus: "yellow", Timeout: 30 * time.Second}, nil)
		if err != nil {
			return "", false, err
		}
	default:
		return "", false, err
	}

	alias := c.Alias(name)
	err = c.Do(ctx, "get alias "+alias, esapi.IndicesExistsAliasRequest{Name: []string{alias}}, nil)
	if err == nil {
		return index, created, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", created, err
	}
	actions := map[string]any{"actions": []any{
		map[string]any{"add": map[string]any{"index": index, "alias": alias}},
	}}
	b, _ := json.Marshal(actions)
	err = c.Do(ctx, "add alias "+alias, esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(b)}, nil)
	if err != nil {
		return "", created, err
	}
	return index, created, nil
}

// AliasTarget returns the concrete index the named definition's alias points at; ErrNotFound
// when the alias does not exist.
func (c *Client) AliasTarget(ctx context.Context, name string) (string, error) {
	alias := c.Alias(name)
	var res map[string]json.RawMessage
	if err := c.Do(ctx, "get alias "+alias, esapi.IndicesGetAliasRequest{Name: []string{alias}}, &res); err != nil {
		return "", err
	}
	if len(res) != 1 {
		return "", fmt.Errorf("elastic: alias %s points at %d indices, want 1", alias, len(res))
	}
	for index := range res {
		return index, nil
	}
	return "", nil
}

// OlderAlias reports the index the named definition's alias points at when it is of an
// older version than this build writes (a cluster upgraded from a release with another
// mapping), "" when the alias names the current index, a newer one or none.
func (c *Client) OlderAlias(ctx context.Context, name string) (string, error) {
	target, err := c.AliasTarget(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if c.OlderIndex(name, target) {
		return target, nil
	}
	return "", nil
}

// indexVersion reads the version of a versioned index named alias + "_v" + N.
func indexVersion(index, alias string) (int, bool) {
	n, ok := strings.CutPrefix(index, alias+"_v")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n)
	return v, err == nil
}

// MoveAliasForward points the named definition's alias at this build's index (creating it)
// when it names an index of an older version, in one atomic alias update; the older index is
// left for the operator to delete. It returns the index the alias left ("" when it did not
// move). A rebuild from the record store fills the new index (lectern reindex).
func (c *Client) MoveAliasForward(ctx context.Context, name string, opts mappings.Options) (string, error) {
	old, err := c.OlderAlias(ctx, name)
	if err != nil || old == "" {
		return "", err
	}
	index, _, err := c.EnsureIndex(ctx, name, opts)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(map[string]any{"actions": []any{
		map[string]any{"remove": map[string]any{"index": old, "alias": c.Alias(name)}},
		map[string]any{"add": map[string]any{"index": index, "alias": c.Alias(name)}},
	}})
	if err := c.Do(ctx, "move alias "+c.Alias(name), esapi.IndicesUpdateAliasesRequest{Body: bytes.NewReader(b)}, nil); err != nil {
		return "", err
	}
	return old, nil
}

// DeleteIndices deletes every index whose name starts with prefix, and with them their
// aliases; it is meant for tests, to remove what a test prefix created. prefix must be a
// valid, non-empty index prefix (see Config.IndexPrefix), so it can never match everything.
// It names the indices explicitly, so the cluster need not allow wildcard deletes.
func (c *Client) DeleteIndices(ctx context.Context, prefix string) error {
	if prefix == "" || !prefixRE.MatchString(prefix) {
		return fmt.Errorf("elastic: refusing to delete indices with prefix %q", prefix)
	}
	var rows []struct {
		Index string `json:"index"`
	}
	err := c.Do(ctx, "list indices "+prefix+"*", esapi.CatIndicesRequest{
		Index: []string{prefix + "*"}, Format: "json", H: []string{"index"},
		ExpandWildcards: "all",
	}, &rows)
	if err != nil {
		return err
	}
	var names []string
	for _, r := range rows {
		if strings.HasPrefix(r.Index, prefix) {
			names = append(names, r.Index)
		}
	}
	// Keep each request line well below the default 4 KiB HTTP line limit.
	for len(names) > 0 {
		n, size := 0, 0
		for n < len(names) && (n == 0 || size+len(names[n])+1 < 3000) {
			size += len(names[n]) + 1
			n++
		}
		batch := names[:n]
		names = names[n:]
		err := c.Do(ctx, "delete indices "+strings.Join(batch, ","), esapi.IndicesDeleteRequest{
			Index: batch, IgnoreUnavailable: esapi.BoolPtr(true),
		}, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

// Token is one token of an Analyze result.
type Token struct {
	// Token is the term text.
	Token string `json:"token"`
	// Position is the token's position; stop words leave gaps.
	Position int `json:"position"`
	// StartOffset is the token's first character (UTF-16 units) in the text.
	StartOffset int `json:"start_offset"`
	// EndOffset is one past the token's last character (UTF-16 units).
	EndOffset int `json:"end_offset"`
	// Type is the tokenizer's token type, such as "<ALPHANUM>".
	Type string `json:"type"`
}

// Analyze runs text through an analyzer of the named definition's index (through its alias),
// such as mappings.AnalyzerTerms on mappings.Content, and returns the tokens.
func (c *Client) Analyze(ctx context.Context, name, analyzer, text string) ([]Token, error) {
	b, err := json.Marshal(map[string]string{"analyzer": analyzer, "text": text})
	if err != nil {
		return nil, fmt.Errorf("elastic: %w", err)
	}
	var res struct {
		Tokens []Token `json:"tokens"`
	}
	err = c.Do(ctx, "analyze "+c.Alias(name), esapi.IndicesAnalyzeRequest{
		Index: c.Alias(name), Body: bytes.NewReader(b),
	}, &res)
	return res.Tokens, err
}

// IsIndexNotFound reports whether err is Elasticsearch's index_not_found_exception: the index
// or alias a request named does not exist (a lost index, a new cluster). Writes through an
// alias send require_alias=true so that they fail this way instead of auto-creating a concrete
// index named like the alias, which would block EnsureIndex's alias for good.
func IsIndexNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && e.Type == "index_not_found_exception"
}

// MissingAliases returns the aliases, among those of the named definitions, that do not
// exist, in the order of names; nil when all exist. Readiness reports them: a cluster that
// came back empty answers pings but cannot serve a search.
func (c *Client) MissingAliases(ctx context.Context, names ...string) ([]string, error) {
	found, err := c.Aliases(ctx, names...)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, name := range names {
		if alias := c.Alias(name); len(found[alias]) == 0 {
			missing = append(missing, alias)
		}
	}
	return missing, nil
}

// Aliases returns, for the named definitions' aliases that exist, the indices each points
// at, in one request whatever the number of names (readiness probes run it every few seconds
// on every node; an alias that does not exist is simply absent from the map).
func (c *Client) Aliases(ctx context.Context, names ...string) (map[string][]string, error) {
	aliases := make([]string, len(names))
	for i, name := range names {
		aliases[i] = c.Alias(name)
	}
	// _cat/aliases answers 200 with the aliases it found, where _alias answers 404 for a
	// list with one missing name.
	var rows []struct {
		Alias string `json:"alias"`
		Index string `json:"index"`
	}
	err := c.Do(ctx, "list aliases", esapi.CatAliasesRequest{Name: aliases, Format: "json", H: []string{"alias", "index"}}, &rows)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(rows))
	for _, r := range rows {
		out[r.Alias] = append(out[r.Alias], r.Index)
	}
	return out, nil
}

// OlderIndex reports whether index, the target of the named definition's alias, is of an
// older version than this build writes.
func (c *Client) OlderIndex(name, index string) bool {
	def, _ := mappings.Lookup(name)
	v, ok := indexVersion(index, c.Alias(name))
	return ok && v < def.Version && index != c.Index(name)
}
