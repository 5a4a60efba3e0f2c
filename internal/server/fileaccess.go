package server

import (
	"errors"
	"fmt"
	"os"

	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
)

// installFileAccess sets the server's file policy from --secure-file-priv
// (internal/sqlfront/fileaccess.go) and answers @@secure_file_priv. The
// default directory, DATADIR-files, is created (mode 0750) when missing, as
// MySQL's packages create mysql-files; a directory given explicitly must
// exist. Either must be outside the data directory.
func installFileAccess(fe *sqlfront.Frontend, cfg config.Config) error {
	dir, disabled := cfg.SecureFileDir()
	var fa sqlfront.FileAccess
	if disabled {
		var err error
		if fa, err = sqlfront.ResolveSecureFilePriv("", cfg.Datadir); err != nil {
			return err
		}
		fa.Disabled = true
	} else {
		if !cfg.SecureFilePrivSet {
			if err := os.Mkdir(dir, 0o750); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("secure-file-priv: create %s: %w", dir, err)
			}
		}
		var err error
		if fa, err = sqlfront.ResolveSecureFilePriv(dir, cfg.Datadir); err != nil {
			return err
		}
	}
	fe.SetFileAccess(fa)
	v := fa.SecureFilePrivValue()
	return installServerVars(fe, map[string]func() any{"secure_file_priv": func() any { return v }})
}
