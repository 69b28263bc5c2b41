package settings

import "fmt"

// Layer is the set of explicit values stored at one configuration level,
// keyed by setting id. The level travels with the values so that the
// cascade can enforce order and reject values stored at a level the
// setting does not allow, instead of trusting argument positions.
type Layer struct {
	// Level is exactly one of LevelSystem, LevelTenant, LevelCourse,
	// LevelRegistration.
	Level Level
	// Values maps setting id to explicit value. Ids unknown to the
	// catalogue are ignored by EffectiveAll (they may belong to a setting
	// that was retired) and are never consulted by Resolve.
	Values map[string]string
}

// Item is one entry of a configuration listing, matching the spec's
// configurationItems[] element.
type Item struct {
	// ID is the setting id.
	ID string
	// Value is the effective value, or "" for a secret setting.
	Value string
}

// checkLayers enforces that layers are single levels in strictly increasing
// specificity, because the cascade "later overrides earlier" is only right
// when the caller passes tenant before course before registration.
func checkLayers(layers []Layer) error {
	var prev Level
	for _, l := range layers {
		if !l.Level.single() || l.Level <= prev {
			return &Error{Kind: ErrBadLayer,
				Msg: fmt.Sprintf("configuration layer %s is out of order or not a single level", l.Level)}
		}
		prev = l.Level
	}
	return nil
}

// resolve walks the cascade default → system → tenant → course →
// registration for one known setting. A stored value that the setting does
// not allow at that level, or that no longer normalises (e.g. after a bound
// was tightened), is reported rather than silently skipped: falling back
// quietly would hide a misconfiguration behind an unexpected default.
func resolve(s Setting, layers []Layer) (string, error) {
	v := s.Default
	for _, l := range layers {
		raw, ok := l.Values[s.ID]
		if !ok {
			continue
		}
		if !s.Levels.Has(l.Level) {
			return "", wrongLevel(s, l.Level)
		}
		n, err := Normalize(s, raw)
		if err != nil {
			return "", fmt.Errorf("stored at %s level: %w", l.Level, err)
		}
		v = n
	}
	return v, nil
}

// Resolve returns the effective value of id through the cascade default →
// system → tenant → course → registration: the most specific explicit value
// wins, and a level without a value falls back to the less specific ones.
// Layers must be given in that order (each at most once; missing levels may
// simply be omitted).
//
// Resolve returns secret values in clear because the engine itself needs
// them (e.g. an LRS account's password). Never expose its result through the
// API; use [Catalogue.Effective] or [Catalogue.EffectiveAll] for that.
func (c *Catalogue) Resolve(id string, layers ...Layer) (string, error) {
	s, err := c.get(id)
	if err != nil {
		return "", err
	}
	if err := checkLayers(layers); err != nil {
		return "", err
	}
	return resolve(s, layers)
}

// Effective is Resolve for the public single-setting GET: secret settings
// are write-only, so their Value is always "" whether or not one is set.
// Validation still runs for secrets, so a corrupt stored secret is reported.
func (c *Catalogue) Effective(id string, layers ...Layer) (Item, error) {
	v, err := c.Resolve(id, layers...)
	if err != nil {
		return Item{}, err
	}
	if c.byID[id].Secret {
		v = ""
	}
	return Item{ID: id, Value: v}, nil
}

// EffectiveAll returns the effective value of every setting in the
// catalogue, sorted by id, for the GET .../configuration listings. Secret
// settings are write-only: they are listed (so clients can discover them)
// with an empty Value, never in clear. The first invalid stored value makes
// the whole call fail, for the reason given on [Catalogue.Resolve].
func (c *Catalogue) EffectiveAll(layers ...Layer) ([]Item, error) {
	if err := checkLayers(layers); err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(c.ids))
	for _, id := range c.ids {
		s := c.byID[id]
		v, err := resolve(s, layers)
		if err != nil {
			return nil, err
		}
		if s.Secret {
			v = ""
		}
		out = append(out, Item{ID: id, Value: v})
	}
	return out, nil
}
