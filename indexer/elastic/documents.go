package elastic

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// contentPrefix encodes tenant and content id unambiguously (length-prefixed).
func contentPrefix(tenant, contentID string) string {
	b := binary.AppendUvarint(nil, uint64(len(tenant)))
	b = append(b, tenant...)
	b = binary.AppendUvarint(b, uint64(len(contentID)))
	return string(append(b, contentID...))
}

// versionKey names a content version in document ids: a hash, so that ids stay short
// whatever the tenant and content ids are.
func versionKey(tenant, contentID string, v int) string {
	s := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(contentPrefix(tenant, contentID)), uint64(int64(v))))
	return hex.EncodeToString(s[:20])
}

func statusID(vkey string) string { return "s:" + vkey }

func docID(kind byte, vkey string, i int) string {
	return string(kind) + ":" + vkey + ":" + strconv.Itoa(i)
}

// chunkIndex returns the index of a chunk document within its version, from its id.
func chunkIndex(id string) int {
	i, err := strconv.Atoi(id[strings.LastIndexByte(id, ':')+1:])
	if err != nil {
		return -1
	}
	return i
}

// status is a version's status document.
type status struct {
	Kind      string   `json:"kind"`
	Tenant    string   `json:"tenant_id"`
	ContentID string   `json:"content_id"`
	Version   int      `json:"version"`
	Tags      []string `json:"tags"`
	Active    bool     `json:"active"`
}

// versionDocs returns the index actions of a content version's documents (see the package
// comment): chunks and fields, prepared by indexer.PrepareContent, and the status document.
func versionDocs(tenant, contentID string, v int, cs []indexer.Chunk, fs []indexer.Field, st indexer.Status) []bulkOp {
	vkey := versionKey(tenant, contentID, v)
	tags := st.Tags
	if tags == nil {
		tags = []string{}
	}
	lex := make([][]string, len(cs))
	vlexSet := map[string]bool{}
	for i, c := range cs {
		var ls []string
		lex[i], ls = lexTerms(c.Text)
		for _, l := range ls {
			vlexSet[l] = true
		}
	}
	vlex := slices.Sorted(maps.Keys(vlexSet))
	ops := make([]bulkOp, 0, len(cs)+len(fs)+1)
	for i, c := range cs {
		d := map[string]any{
			"kind": kindChunk, "tenant_id": tenant, "content_id": contentID, "version": v, "version_key": vkey,
			"tags": tags, "active": st.Active, "location": c.Location, "text": c.Text, "phrase": phraseField(c.Text), "lex": lex[i], "vlex": vlex,
		}
		if c.Vector != nil && !zero(c.Vector) {
			// Cosine similarity is undefined for a zero vector, and Elasticsearch refuses one.
			d["embedding"] = c.Vector
		}
		ops = append(ops, bulkOp{action: "index", id: docID('c', vkey, i), body: d})
	}
	for i, f := range fs {
		ops = append(ops, bulkOp{action: "index", id: docID('f', vkey, i), body: map[string]any{
			"kind": kindField, "tenant_id": tenant, "content_id": contentID, "version": v, "version_key": vkey,
			"tags": tags, "active": st.Active, "field_type": f.FieldType,
			"value": f.Value, "created": f.Created, "updated": f.Updated,
		}})
	}
	return append(ops, bulkOp{action: "index", id: statusID(vkey), body: status{Kind: kindStatus, Tenant: tenant,
		ContentID: contentID, Version: v, Tags: tags, Active: st.Active}})
}

// lexTerms returns the terms of a chunk's lex field for text — each lexeme l, and "l b" for
// every set bit b of indexer.KeywordTF of its term frequency — and the lexemes.
func lexTerms(text string) (terms, lexemes []string) {
	tf := map[string]int{}
	for _, t := range analysis.Tokens(text) {
		if !t.Stop {
			if tf[t.Term] == 0 {
				lexemes = append(lexemes, t.Term)
			}
			tf[t.Term]++
		}
	}
	terms = make([]string, 0, 4*len(lexemes))
	for _, l := range lexemes {
		terms = append(terms, l)
		f := indexer.KeywordTF(tf[l])
		for b := range indexer.KeywordTFBits {
			if f&(1<<b) != 0 {
				terms = append(terms, lexBit(l, b))
			}
		}
	}
	return terms, lexemes
}

// phraseField returns the value of a chunk's phrase field for text: its phrase terms
// (analysis.PhraseTerms, a placeholder for every stop word so that positions are the words'),
// joined by spaces for the field's built-in whitespace analyzer (mappings.AnalyzerTerms) to
// split apart again. Text is analysed here, not by Elasticsearch, so the index needs no
// analysis plugin and both backends index the same terms. Terms hold no whitespace: the
// word splitting breaks words there.
func phraseField(text string) string { return strings.Join(analysis.PhraseTerms(text), " ") }

// lexBit is the lex term of bit b of a lexeme's KeywordTF: lexemes hold no spaces (the
// tokenizer splits words there), so it cannot be another lexeme.
func lexBit(lexeme string, b int) string { return lexeme + " " + strconv.Itoa(b) }

func zero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
