package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lectern-lms/lectern/storage/record"
)

// SettingSkillTaxonomy names the taxonomy skills are generated against (spec 001, "Skills
// configuration"); empty generates skills without a taxonomy.
const SettingSkillTaxonomy = "GENERATION__SKILL_TAXONOMY"

// KindSetting is the record kind of a content service setting.
const KindSetting = "content_setting"

// ErrUnknownSetting means the content service has no setting of that id.
var ErrUnknownSetting = errors.New("unknown content setting")

// settingDefaults is the content service's settings catalogue: every setting and its default.
var settingDefaults = map[string]string{SettingSkillTaxonomy: ""}

// SettingIDs lists the content service's settings, sorted.
func SettingIDs() []string {
	ids := make([]string, 0, len(settingDefaults))
	for id := range settingDefaults {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

type settingData struct {
	Value string `json:"value"`
}

// Config keeps the content service's per-tenant settings in the record store (apart from
// the course engine's configuration catalogue: these settings have another API and scope).
type Config struct{ records record.Store }

// NewConfig returns the settings store over records.
func NewConfig(records record.Store) *Config { return &Config{records: records} }

// Get returns the tenant's value of setting id, its default when never set.
func (c *Config) Get(ctx context.Context, tenant, id string) (string, error) {
	def, ok := settingDefaults[id]
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownSetting, id)
	}
	r, err := c.records.Get(ctx, tenant, KindSetting, id)
	if errors.Is(err, record.ErrNotFound) {
		return def, nil
	}
	if err != nil {
		return "", err
	}
	var d settingData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return "", fmt.Errorf("decode setting %s: %w", id, err)
	}
	return d.Value, nil
}

// Set stores the tenant's value of setting id; the caller has validated the value.
func (c *Config) Set(ctx context.Context, tenant, id, value string) error {
	if _, ok := settingDefaults[id]; !ok {
		return fmt.Errorf("%w: %q", ErrUnknownSetting, id)
	}
	data, _ := json.Marshal(settingData{Value: value})
	err := c.records.Create(ctx, &record.Record{Tenant: tenant, Kind: KindSetting, ID: id, Data: data})
	if errors.Is(err, record.ErrConflict) {
		_, err = record.Modify(ctx, c.records, tenant, KindSetting, id, func(r *record.Record) error {
			r.Data = data
			return nil
		})
	}
	return err
}
