package settings

import (
	"fmt"
	"slices"
	"strings"
)

// Catalogue is an immutable set of setting definitions indexed by id. It is
// a value built per caller (see [Default]) rather than a package global, so
// tests and tenants can never leak changes into each other.
type Catalogue struct {
	byID map[string]Setting
	ids  []string // sorted, for deterministic All and EffectiveAll
}

// New builds a catalogue from settings after checking each definition: ids
// must be non-empty and unique, types and levels known, enums must list
// their values, bounds must be ordered, and every default must already be
// in canonical form. Checking at construction turns a typo in the seed
// table into a test failure instead of a runtime surprise.
func New(settings ...Setting) (*Catalogue, error) {
	c := &Catalogue{byID: make(map[string]Setting, len(settings))}
	for _, s := range settings {
		if err := checkDefinition(s); err != nil {
			return nil, err
		}
		if _, dup := c.byID[s.ID]; dup {
			return nil, fmt.Errorf("settings: duplicate setting id %q", s.ID)
		}
		c.byID[s.ID] = s.clone()
		c.ids = append(c.ids, s.ID)
	}
	slices.Sort(c.ids)
	return c, nil
}

func checkDefinition(s Setting) error {
	if s.ID == "" || strings.TrimSpace(s.ID) != s.ID {
		return fmt.Errorf("settings: invalid setting id %q", s.ID)
	}
	if s.Type < TypeString || s.Type > TypeCredentials {
		return fmt.Errorf("settings: setting %q has unknown type %d", s.ID, int(s.Type))
	}
	if s.Levels == 0 || s.Levels&^(LevelSystem|LevelTenant|LevelCourse|LevelRegistration) != 0 {
		return fmt.Errorf("settings: setting %q has invalid levels %s", s.ID, s.Levels)
	}
	if s.Type == TypeEnum && len(s.Allowed) == 0 {
		return fmt.Errorf("settings: enum setting %q lists no allowed values", s.ID)
	}
	if len(s.Allowed) > 0 && s.Type != TypeEnum && s.Type != TypeURL {
		return fmt.Errorf("settings: setting %q of type %s cannot list allowed values", s.ID, s.Type)
	}
	if s.Bounded && (s.Type != TypeInt || s.Min > s.Max) {
		return fmt.Errorf("settings: setting %q has invalid bounds", s.ID)
	}
	got, err := Normalize(s, s.Default)
	if err != nil {
		return fmt.Errorf("settings: default of %q: %w", s.ID, err)
	}
	if got != s.Default {
		return fmt.Errorf("settings: default of %q is %q, canonical form is %q", s.ID, s.Default, got)
	}
	return nil
}

// Default returns a fresh catalogue of every setting Lectern knows (see
// seed.go). Each call builds a new value, so callers may hold it for the
// life of the process without sharing mutable state. It panics only if the
// built-in table is inconsistent, which the package tests rule out.
func Default() *Catalogue {
	c, err := New(builtin()...)
	if err != nil {
		panic(err)
	}
	return c
}

// Lookup returns the definition of id (case-sensitive) and whether it
// exists. The result is a copy.
func (c *Catalogue) Lookup(id string) (Setting, bool) {
	s, ok := c.byID[id]
	if !ok {
		return Setting{}, false
	}
	return s.clone(), true
}

// All returns copies of every definition, sorted by id, so listings are
// deterministic.
func (c *Catalogue) All() []Setting {
	out := make([]Setting, 0, len(c.ids))
	for _, id := range c.ids {
		out = append(out, c.byID[id].clone())
	}
	return out
}

// Len returns the number of settings in the catalogue.
func (c *Catalogue) Len() int { return len(c.ids) }

// get is Lookup without the copy, returning the package error for an
// unknown id; for internal read-only use.
func (c *Catalogue) get(id string) (Setting, error) {
	s, ok := c.byID[id]
	if !ok {
		return Setting{}, &Error{ID: id, Kind: ErrUnknownSetting,
			Msg: fmt.Sprintf("%q is not a valid setting ID", id)}
	}
	return s, nil
}

// Validate is the write path of PUT .../configuration/{settingId}: it checks
// that id exists and may be set at level (exactly one level), then returns
// the canonical value to store. Errors wrap [ErrUnknownSetting],
// [ErrWrongLevel] or [ErrInvalidValue], in that order of precedence, so a
// caller learns first about the problem it can least work around; a level
// that is not exactly one level is a programming error ([ErrBadLayer]).
func (c *Catalogue) Validate(id string, level Level, value string) (string, error) {
	s, err := c.get(id)
	if err != nil {
		return "", err
	}
	if !level.single() {
		return "", &Error{ID: id, Kind: ErrBadLayer,
			Msg: fmt.Sprintf("setting '%s' written at %s: exactly one level is required", id, level)}
	}
	if !s.Levels.Has(level) {
		return "", wrongLevel(s, level)
	}
	return Normalize(s, value)
}

func wrongLevel(s Setting, level Level) error {
	return &Error{ID: s.ID, Kind: ErrWrongLevel,
		Msg: fmt.Sprintf("setting '%s' cannot be set at %s level (allowed: %s)", s.ID, level, s.Levels)}
}
