// Package mappings holds Lectern's Elasticsearch index definitions (settings and mappings) as
// embedded JSON files and renders them into the bodies of create-index requests.
//
// Each definition is a template: string values that start with "$" are placeholders that
// Render replaces with a typed value — the embedding dimension count, the shard and replica
// counts, and the definition's name and version (stored in the mapping's _meta).
//
// Indices are versioned: a definition named "content" at version 1 is created as "content_v1"
// (Versioned), and an alias "content" points at the live version, so a changed definition
// gets a new version and a new index that can be filled before the alias moves over.
//
// The definitions use only what every Elasticsearch 8 node ships, with no plugin and not even
// the analysis-common module (absent from some distributions, and an operator of a managed
// cluster cannot add one): Lectern analyses text in Go (mappings/analysis), and the content
// index receives the resulting terms whitespace-separated, so the built-in "whitespace"
// analyzer only splits them apart again.
package mappings

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

//go:embed *.json
var files embed.FS

// Names of the index definitions.
const (
	// Content is the index of content search (indexer/elastic): chunks (the text, stored but
	// not indexed; its terms as Go analysed them — lexemes for keyword search, the phrase
	// terms for phrase search; an embedding for kNN search; the tenant, content id and
	// version, tags, an active flag and a location), metadata field values (field type and
	// value, for field search) and one status document per content version, told apart by
	// the keyword "kind". Version 4 stopped analysing text in Elasticsearch (its plugin).
	Content = "content"
	// Statements is the index of xAPI statements: the fields the xAPI statement queries filter
	// on and the report extension aggregates on, plus the raw statement (stored, not indexed).
	// Version 2 added result, report_actor_ifis and report_actors (the reports).
	Statements = "statements"
	// XAPIDocuments is the index of the xAPI document resources (state, activity profile,
	// agent profile): the key fields, an ETag, the update time and the body (binary, not
	// indexed).
	XAPIDocuments = "xapi_documents"
	// XAPIActivities is the index of canonical xAPI activity definitions, one per tenant and
	// activity id, with the activity object stored but not indexed.
	XAPIActivities = "xapi_activities"
	// XAPIAttachments is the index of xAPI statement attachment contents, one per tenant and
	// sha2, with the content stored as binary (not indexed).
	XAPIAttachments = "xapi_attachments"
)

// Analysis components the content index uses.
const (
	// AnalyzerTerms is the analyzer of the content index's "phrase" field: Elasticsearch's
	// built-in "whitespace" analyzer (no custom analysis component), which splits the terms
	// that Go's mappings/analysis.PhraseTerms made (joined by spaces) back apart, each at its
	// word's position.
	AnalyzerTerms = "whitespace"
	// NormalizerLowercase is the normalizer of the keyword field "value" (metadata field
	// values, for field search): the whole value, lowercased.
	NormalizerLowercase = "lectern_lowercase"
)

// Index describes one index definition.
type Index struct {
	// Name is the definition's name, also the name of the read alias ("content").
	Name string
	// Version is the definition's version; change it with every change of the JSON.
	Version int
}

// indexes lists every definition; each has a file <Name>.json (checked by the tests).
var indexes = []Index{
	{Name: Content, Version: 4},
	{Name: Statements, Version: 2},
	{Name: XAPIDocuments, Version: 1},
	{Name: XAPIActivities, Version: 1},
	{Name: XAPIAttachments, Version: 1},
}

// Indexes returns all index definitions, in a stable order.
func Indexes() []Index { return slices.Clone(indexes) }

// Lookup returns the definition with the given name, and whether there is one.
func Lookup(name string) (Index, bool) {
	for _, ix := range indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return Index{}, false
}

// Versioned returns the name of the concrete index of the named definition at its current
// version, such as "content_v1". It panics for a name that has no definition: names are
// constants of this package, so an unknown one is a programming error.
func Versioned(name string) string {
	ix, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("mappings: no index definition named %q", name))
	}
	return ix.Versioned()
}

// Versioned returns the concrete index name of this definition, such as "content_v1".
func (ix Index) Versioned() string { return fmt.Sprintf("%s_v%d", ix.Name, ix.Version) }

// Options are the deployment-dependent values that Render fills into a definition.
type Options struct {
	// EmbeddingDims is the number of dimensions of dense_vector fields (the embedding model's
	// output size). Required, between 1 and MaxEmbeddingDims, by definitions with a vector.
	EmbeddingDims int
	// Shards is the number of primary shards; zero means 1.
	Shards int
	// Replicas is the number of replicas of each shard; zero means none, which a single-node
	// cluster needs to be green.
	Replicas int
}

// MaxEmbeddingDims is the largest dense_vector dimension count Elasticsearch 8 indexes.
const MaxEmbeddingDims = 4096

// Render returns the create-index body (settings and mappings) of the named definition with
// its placeholders filled from opts, as indented JSON with object keys in sorted order.
func Render(name string, opts Options) ([]byte, error) {
	ix, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("mappings: no index definition named %q", name)
	}
	raw, err := files.ReadFile(name + ".json")
	if err != nil {
		return nil, fmt.Errorf("mappings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("mappings: parse %s.json: %w", name, err)
	}
	if opts.Shards < 0 || opts.Replicas < 0 {
		return nil, fmt.Errorf("mappings: negative shard or replica count (%d, %d)", opts.Shards, opts.Replicas)
	}
	shards := opts.Shards
	if shards == 0 {
		shards = 1
	}
	values := map[string]func() (any, error){
		"$name":     func() (any, error) { return ix.Name, nil },
		"$version":  func() (any, error) { return ix.Version, nil },
		"$shards":   func() (any, error) { return shards, nil },
		"$replicas": func() (any, error) { return opts.Replicas, nil },
		"$embedding_dims": func() (any, error) {
			if opts.EmbeddingDims < 1 || opts.EmbeddingDims > MaxEmbeddingDims {
				return nil, fmt.Errorf("Options.EmbeddingDims must be between 1 and %d, got %d",
					MaxEmbeddingDims, opts.EmbeddingDims)
			}
			return opts.EmbeddingDims, nil
		},
	}
	doc, err = fill(doc, values)
	if err != nil {
		return nil, fmt.Errorf("mappings: render %s: %w", name, err)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("mappings: render %s: %w", name, err)
	}
	return append(out, '\n'), nil
}

// fill replaces every placeholder string in v (recursively) by its value.
func fill(v any, values map[string]func() (any, error)) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			r, err := fill(e, values)
			if err != nil {
				return nil, err
			}
			t[k] = r
		}
	case []any:
		for i, e := range t {
			r, err := fill(e, values)
			if err != nil {
				return nil, err
			}
			t[i] = r
		}
	case string:
		if strings.HasPrefix(t, "$") {
			f, ok := values[t]
			if !ok {
				return nil, fmt.Errorf("unknown placeholder %q", t)
			}
			return f()
		}
	}
	return v, nil
}
