package server

import (
	"github.com/lectern-lms/lectern/lrs/access"
)

// LRSAccount is one basic-auth account of the LRS configured in a tenant's settings
// (lrs/access.Account).
type LRSAccount = access.Account

// ParseLRSAccounts parses the value of TinCanBasicAccounts or xAPIBasicAccounts
// (lrs/access.ParseAccounts).
func ParseLRSAccounts(value string) ([]LRSAccount, error) { return access.ParseAccounts(value) }

// SettingsAccounts is the default LRSBasicAuthority: the accounts of the addressed tenant's
// settings (lrs/access.SettingsAccounts).
type SettingsAccounts = access.SettingsAccounts

// accountPrincipal builds a principal whose authority is an account agent.
func accountPrincipal(homePage, name, tenantID string, level LRSLevel) *LRSPrincipal {
	return access.AccountPrincipal(homePage, name, tenantID, level)
}
