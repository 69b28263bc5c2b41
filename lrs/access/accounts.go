package access

import (
	"context"
	"errors"
	"strings"

	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/tenant"
)

// Account is one basic-auth account of the LRS configured in a tenant's settings.
type Account struct {
	User, Password string
	Level          Level
}

// ParseAccounts parses the value of TinCanBasicAccounts or xAPIBasicAccounts: entries
// separated by newlines or commas, each "<username>:<password>:<level>" with level one of
// root, readwrite, readonly or person (also read-write, read-only, rw, ro). The username
// ends at the first colon and the level starts after the last one, so a password may hold
// colons but no comma or newline; neither may be empty. Blank entries are skipped; a malformed
// one is an error.
func ParseAccounts(value string) ([]Account, error) {
	var out []Account
	for _, entry := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		user, rest, ok := strings.Cut(entry, ":")
		i := strings.LastIndex(rest, ":")
		if !ok || user == "" || i <= 0 {
			return nil, errors.New("an LRS account must read <username>:<password>:<level> with a non-empty username and password")
		}
		level, err := ParseLevel(rest[i+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, Account{User: user, Password: rest[:i], Level: level})
	}
	return out, nil
}

// ParseLevel reads an account level of the settings.
func ParseLevel(s string) (Level, error) {
	switch trimLower(s) {
	case "root":
		return Root, nil
	case "readwrite", "read-write", "rw", "application":
		return ReadWrite, nil
	case "readonly", "read-only", "ro":
		return ReadOnly, nil
	case "person", "user", "default":
		return Person, nil
	}
	return "", errors.New("unknown LRS account level '" + s + "' (root, readwrite, readonly, person)")
}

// SettingsAccounts resolves Basic credentials against the accounts of the addressed tenant's
// settings TinCanRootAccount (level root), TinCanBasicAccounts and xAPIBasicAccounts
// (TinCanGetAuthorityFromBasicAuth's default).
type SettingsAccounts struct {
	Settings *settings.Store
	// HomePage is the account homePage of the authorities it builds.
	HomePage string
}

// AuthorityFromBasicAuth returns the principal of the matching account, nil, nil when none
// matches.
func (a SettingsAccounts) AuthorityFromBasicAuth(ctx context.Context, tenantID, user, password string) (*Principal, error) {
	if a.Settings == nil || tenantID == "" {
		return nil, nil
	}
	layer, err := a.Settings.TenantLayer(ctx, tenantID)
	if errors.Is(err, tenant.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cat := a.Settings.Catalogue()
	var accounts []Account
	if v, err := cat.Resolve("TinCanRootAccount", layer); err == nil && v != "" {
		if u, p, ok := strings.Cut(v, ":"); ok && u != "" && p != "" {
			accounts = append(accounts, Account{User: u, Password: p, Level: Root})
		}
	}
	for _, id := range []string{"TinCanBasicAccounts", "xAPIBasicAccounts"} {
		v, err := cat.Resolve(id, layer)
		if err != nil || v == "" {
			continue
		}
		// A malformed value locks nobody in: it only adds no accounts.
		if list, err := ParseAccounts(v); err == nil {
			accounts = append(accounts, list...)
		}
	}
	var found *Account
	for i := range accounts {
		// Every entry is compared so the time does not tell which one matched.
		if equalConstantTime(user, accounts[i].User) && equalConstantTime(password, accounts[i].Password) && found == nil {
			found = &accounts[i]
		}
	}
	if found == nil {
		return nil, nil
	}
	return AccountPrincipal(a.HomePage, found.User, tenantID, found.Level), nil
}

// Base is the record store's mount on the server's origin.
const Base = "/lrs/TCAPI"

// Origin is the server's public origin without a trailing slash, or an invalid origin when
// none was given, so the homePages built on it are still valid IRIs.
func Origin(publicURL string) string {
	if base := strings.TrimRight(publicURL, "/"); base != "" {
		return base
	}
	return "https://lectern.invalid"
}

// HomePage is the homePage of the accounts the record store names itself (credentials, the
// LMS's authority on the statements the course engine writes): the record store's URL on
// Origin.
func HomePage(publicURL string) string { return Origin(publicURL) + Base }
