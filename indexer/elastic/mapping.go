package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings"
)

// mappingInfo is what New needs of the index mapping.
type mappingInfo struct {
	index string         // concrete index behind the alias
	meta  map[string]any // the mapping's _meta
	model indexer.Model  // recorded in _meta; zero when none
	dims  int            // of the embedding field
}

// phraseType returns the search type of phrase searches (Index.phraseSearchType).
func (ix *Index) phraseType(ctx context.Context) (string, error) {
	var res map[string]struct {
		Settings struct {
			Index struct {
				Shards string `json:"number_of_shards"`
			} `json:"index"`
		} `json:"settings"`
	}
	err := ix.c.Do(ctx, "get settings "+ix.alias, esapi.IndicesGetSettingsRequest{Index: []string{ix.alias},
		Name: []string{"index.number_of_shards"}}, &res)
	if err != nil {
		return "", fmt.Errorf("indexer/elastic: %w", err)
	}
	for _, r := range res {
		if r.Settings.Index.Shards != "1" {
			return dfsSearch, nil
		}
	}
	return "", nil
}

func (ix *Index) readMapping(ctx context.Context) (mappingInfo, error) {
	var res map[string]struct {
		Mappings struct {
			Meta       map[string]any `json:"_meta"`
			Properties struct {
				Embedding struct {
					Dims int `json:"dims"`
				} `json:"embedding"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	err := ix.c.Do(ctx, "get mapping "+ix.alias, esapi.IndicesGetMappingRequest{Index: []string{ix.alias}}, &res)
	if err != nil {
		return mappingInfo{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	if len(res) != 1 {
		return mappingInfo{}, fmt.Errorf("indexer/elastic: alias %s points at %d indices, want 1", ix.alias, len(res))
	}
	var m mappingInfo
	for name, r := range res {
		m.index, m.meta, m.dims = name, r.Mappings.Meta, r.Mappings.Properties.Embedding.Dims
	}
	if raw, ok := m.meta[metaModel]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &m.model); err != nil {
			return mappingInfo{}, fmt.Errorf("indexer/elastic: _meta.%s of %s: %w", metaModel, m.index, err)
		}
	}
	return m, nil
}

// recordModel adds the model to the mapping's _meta (an update replaces _meta whole, so the
// other keys are sent again).
func (ix *Index) recordModel(ctx context.Context, m mappingInfo, model indexer.Model) error {
	meta := map[string]any{}
	for k, v := range m.meta {
		meta[k] = v
	}
	meta[metaModel] = map[string]any{"name": model.Name, "dims": model.Dims}
	b, err := json.Marshal(map[string]any{"_meta": meta})
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	err = ix.c.Do(ctx, "record model in "+m.index, esapi.IndicesPutMappingRequest{Index: []string{m.index}, Body: bytes.NewReader(b)}, nil)
	if err != nil {
		return fmt.Errorf("indexer/elastic: %w", err)
	}
	return nil
}

// recreate makes the content index and its alias again after they were lost (a cluster that
// came back empty, an index deleted by hand), with the mapping and recorded model this Index
// was opened with; callers then retry their request once. The new index is empty: `lectern
// reindex` fills it from the record and blob stores.
func (ix *Index) recreate(ctx context.Context) error {
	if _, _, err := ix.c.EnsureIndex(ctx, mappings.Content, mappings.Options{EmbeddingDims: ix.dims}); err != nil {
		return fmt.Errorf("indexer/elastic: recreate %s: %w", ix.alias, err)
	}
	if ix.model == (indexer.Model{}) {
		return nil
	}
	m, err := ix.readMapping(ctx)
	if err != nil {
		return err
	}
	if m.model == (indexer.Model{}) {
		return ix.recordModel(ctx, m, ix.model)
	}
	return nil
}
