// Package fieldgen generates and stores the generated fields of content versions (TITLE,
// SUMMARY, KEYWORDS, SKILLS) for the index task (workers/contentjob), which runs it as part
// of a content import job and of a FIELD_GENERATION job: it reads the tenant's
// GENERATION__SKILL_TAXONOMY setting, loads that taxonomy, runs the content.Generator,
// stores the values (content.FieldStore, read by GET .../fields/{type}) and returns every
// stored field of the version for the search index.
package fieldgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/indexer"
)

// JobType is the JobRead type of a field generation job.
const JobType = "FIELD_GENERATION"

// Maker implements contentjob.FieldMaker.
type Maker struct {
	Generator  content.Generator
	Fields     *content.FieldStore
	Config     *content.Config
	Taxonomies *taxonomy.Store
	// Model names the generator's embedding model: taxonomy vectors of another model (or
	// none) are dropped, so skills are then matched by their words.
	Model  string
	Logger *slog.Logger
}

// MakeFields generates the fields of types only (every type when empty), stores them and
// returns all stored fields of the version as index fields.
func (m *Maker) MakeFields(ctx context.Context, tenant string, v *content.Version, sections []extract.Section, chunkVectors [][]float32, phraseVectors map[string][]float32, only []string) ([]indexer.Field, error) {
	types := only
	if len(types) == 0 {
		types = content.FieldTypes
	}
	in := content.GenerateInput{Title: v.Title, Sections: sections, Types: types, ChunkVectors: chunkVectors, PhraseVectors: phraseVectors}
	if slices.Contains(types, content.FieldSkills) {
		id, err := m.Config.Get(ctx, tenant, content.SettingSkillTaxonomy)
		if err != nil {
			return nil, err
		}
		if id != "" {
			t, err := m.Taxonomies.Get(ctx, tenant, id)
			if errors.Is(err, taxonomy.ErrNotFound) {
				return nil, fmt.Errorf("%s names taxonomy %q, which is gone: %w", content.SettingSkillTaxonomy, id, err)
			}
			if err != nil {
				return nil, err
			}
			if t.Model != m.Model || m.Model == "" {
				c := *t
				c.Vectors = nil
				t = &c
			}
			in.Taxonomy = t
		}
	}
	gen, err := m.Generator.Generate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("generate fields: %w", err)
	}
	values := map[string][]string{}
	for _, f := range gen {
		values[f.Type] = append(values[f.Type], f.Value)
	}
	for _, typ := range types {
		if err := m.Fields.Put(ctx, tenant, v.ContentID, v.Version, typ, values[typ]); err != nil {
			return nil, err
		}
	}
	return m.StoredFields(ctx, tenant, v)
}

// StoredFields returns every stored generated field of the version, one index field per
// value, with the dates of its generation.
func (m *Maker) StoredFields(ctx context.Context, tenant string, v *content.Version) ([]indexer.Field, error) {
	stored, err := m.Fields.All(ctx, tenant, v.ContentID, v.Version)
	if err != nil {
		return nil, err
	}
	var out []indexer.Field
	for _, f := range stored {
		for _, val := range f.Values {
			out = append(out, indexer.Field{FieldType: f.Type, Value: val, Created: f.Created.UTC(), Updated: f.Updated.UTC()})
		}
	}
	return out, nil
}
