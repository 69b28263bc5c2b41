package bleve

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	blevesearch "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	bolt "go.etcd.io/bbolt"

	"github.com/lectern-lms/lectern/indexer"
)

func (ix *Index) init(dir string, opts Options) error {
	err := ix.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketRecords, bucketDirty, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		var stored indexer.Model
		if raw := meta.Get(keyModel); raw != nil {
			if err := json.Unmarshal(raw, &stored); err != nil {
				return err
			}
		}
		switch {
		case opts.Model == (indexer.Model{}):
			ix.model = stored
		case stored == (indexer.Model{}):
			ix.model = opts.Model
			raw, _ := json.Marshal(opts.Model)
			return meta.Put(keyModel, raw)
		case stored != opts.Model:
			return fmt.Errorf("%w: the index in %s holds vectors of %s (%d dims), configured model is %s (%d dims)",
				indexer.ErrModelMismatch, dir, stored.Name, stored.Dims, opts.Model.Name, opts.Model.Dims)
		default:
			ix.model = stored
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, indexer.ErrModelMismatch) {
			return err
		}
		return fmt.Errorf("indexer/bleve: init store: %w", err)
	}

	path := filepath.Join(dir, "bleve")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		ix.bi, err = blevesearch.New(path, newMapping())
		if err != nil {
			return fmt.Errorf("indexer/bleve: create index: %w", err)
		}
	} else {
		ix.bi, err = blevesearch.Open(path)
		if err != nil {
			return fmt.Errorf("indexer/bleve: open index: %w", err)
		}
	}

	// Load the version table, then heal versions a crash left half-written.
	var dirty []string
	err = ix.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			var r record
			if err := gob.NewDecoder(bytes.NewReader(v)).Decode(&r); err != nil {
				return fmt.Errorf("record %x: %w", k, err)
			}
			ix.remember(string(k), &r)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketDirty).ForEach(func(k, _ []byte) error {
			dirty = append(dirty, string(k))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("indexer/bleve: load store: %w", err)
	}
	for _, k := range dirty {
		r, err := ix.load(k)
		if err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
		if err := ix.rewrite(k, r); err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
		if err := ix.clean(k); err != nil {
			return fmt.Errorf("indexer/bleve: recover: %w", err)
		}
	}
	return nil
}

// newMapping returns the Bleve mapping of chunk and field documents. Filters are keyword
// fields; only text, text_phrase and value are analysed, and only text and text_phrase keep
// term vectors (phrase search and matched terms need positions).
func newMapping() mapping.IndexMapping {
	keyword := func() *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, false, false
		return f
	}
	analysed := func(analyzer string, vectors bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, vectors, false
		return f
	}
	doc := mapping.NewDocumentStaticMapping()
	for _, name := range []string{"kind", "vkey", "tenant", "content_id", "version", "tags", "active", "field_type"} {
		doc.AddFieldMappingsAt(name, keyword())
	}
	doc.AddFieldMappingsAt("text", analysed(analyzerKeyword, true))
	doc.AddFieldMappingsAt("text_phrase", analysed(analyzerPhrase, true))
	doc.AddFieldMappingsAt("value", analysed(analyzerExact, false))
	m := mapping.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = "keyword"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m
}
