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
  /** The installer itself over SSH (the transport that can complete); inventory, key and work folder are yours. */
  readonly install: string;
  /** Why the `directory:` transport is not offered: it only stages files, so nothing ever reports. */
  readonly stagingNote: string;
}

/**
 * The installer command for a setup (`lst_`) or recovery (`lrc_`) token of the authority at
 * `authorityUrl` (docs/installer.md), over SSH: the only transport with which a session completes. Only the
 * authority URL and the token file are decided here.
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
      '--inventory inventory.json --transport ssh --ssh-key ~/.ssh/id_ed25519 --work-dir vigil-work',
    ].join(' '),
    stagingNote:
      "--transport directory:DIR only stages each VM's files into DIR/<vm_id> and runs nothing there: no instance " +
      'starts, no snapshot arrives, and the session cannot complete. Use it to inspect what would be written.',
  };
}
