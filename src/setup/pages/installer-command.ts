/** Quotes a word for a POSIX shell when it holds anything but plainly safe characters. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The lines the page shows to run the installer: the token goes into a 0600 file from the clipboard, never into argv.
 */
export interface InstallerCommand {
  /** Creates the token file readable only by its owner; the token is pasted on standard input. */
  readonly writeToken: string;
  /** The installer itself; inventory, transport and work folder are the operator's own. */
  readonly install: string;
}

/**
 * The installer command for a setup (`lst_`) or recovery (`lrc_`) token of the authority at
 * `authorityUrl` (docs/installer.md). Only the authority URL and the token file are decided here.
 */
export function installerCommand(authorityUrl: string, kind: 'setup' | 'recovery'): InstallerCommand {
  const file = kind === 'setup' ? 'setup-token' : 'recovery-token';
  return {
    writeToken: `(umask 077 && cat > ${file})   # paste the token, press Enter, then Ctrl-D`,
    install: [
      'vigil install',
      ...(kind === 'recovery' ? ['--recovery'] : []),
      '--setup-url',
      shellWord(authorityUrl),
      '--token-file',
      file,
      '--inventory inventory.json --transport directory:/srv/vigil-vms --work-dir vigil-work',
    ].join(' '),
  };
}
