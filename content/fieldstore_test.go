package content_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

func TestFieldStoreAndConfig(t *testing.T) {
	for _, be := range recordstores.All() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rs := be.Open(t)
			v, err := content.NewStore(rs).AddVersion(ctx, "a", &content.Version{ContentID: "c", Title: "T", JobID: "j"})
			if err != nil {
				t.Fatal(err)
			}
			fs := content.NewFieldStore(rs)
			if _, err := fs.Get(ctx, "a", "c", v.Version, content.FieldSkills); !errors.Is(err, content.ErrFieldNotGenerated) {
				t.Fatalf("before generation: %v", err)
			}
			if err := fs.Put(ctx, "a", "c", v.Version, content.FieldSkills, []string{"Baking"}); err != nil {
				t.Fatal(err)
			}
			first, _ := fs.Get(ctx, "a", "c", v.Version, content.FieldSkills)
			if err := fs.Put(ctx, "a", "c", v.Version, content.FieldSkills, []string{"Baking"}); err != nil {
				t.Fatal(err)
			}
			same, _ := fs.Get(ctx, "a", "c", v.Version, content.FieldSkills)
			if !same.Updated.Equal(first.Updated) {
				t.Fatal("identical values moved update_dt")
			}
			if err := fs.Put(ctx, "a", "c", v.Version, content.FieldSkills, []string{content.UnknownSkill}); err != nil {
				t.Fatal(err)
			}
			changed, _ := fs.Get(ctx, "a", "c", v.Version, content.FieldSkills)
			if !slices.Equal(changed.Values, []string{"Unknown"}) || !changed.Created.Equal(first.Created) || !changed.Updated.After(first.Updated) {
				t.Fatalf("after change: %+v (first %+v)", changed, first)
			}
			if _, err := fs.Get(ctx, "b", "c", v.Version, content.FieldSkills); !errors.Is(err, content.ErrFieldNotGenerated) {
				t.Fatalf("another tenant: %v", err)
			}

			cfg := content.NewConfig(rs)
			if got, err := cfg.Get(ctx, "a", content.SettingSkillTaxonomy); got != "" || err != nil {
				t.Fatalf("default %q, %v", got, err)
			}
			for _, val := range []string{"x", "y"} {
				if err := cfg.Set(ctx, "a", content.SettingSkillTaxonomy, val); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := cfg.Get(ctx, "a", content.SettingSkillTaxonomy); got != "y" {
				t.Fatalf("after two sets: %q", got)
			}
			if got, _ := cfg.Get(ctx, "b", content.SettingSkillTaxonomy); got != "" {
				t.Fatalf("another tenant: %q", got)
			}
			if _, err := cfg.Get(ctx, "a", "NOPE"); !errors.Is(err, content.ErrUnknownSetting) {
				t.Fatalf("unknown setting: %v", err)
			}
		})
	}
}
