import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ForeignOwnerError, makeOwnedDirs, renameKeepingOwner, userName } from '../../src/kernel/owned-files.js';
import { writeDurable, writeSecretFile } from '../../src/kernel/secret-files.js';
import { repoPath } from '../helpers/paths.js';
import { runnableAs } from '../helpers/as-user.js';
import { tempDir } from '../helpers/temp.js';

const root = process.geteuid?.() === 0;
const NOBODY = 65534;
const owner = (p: string) => { const s = statSync(p); return { uid: s.uid, gid: s.gid, mode: s.mode & 0o7777 }; };
const modes = fc.integer({ min: 0, max: 0o777 });
/** Owners root can give a file: its own, nobody's, and numbers no account holds. */
const ids = root ? fc.constantFrom(0, NOBODY, 4242, 60001) : fc.constant(process.getuid?.() ?? 0);

describe('writeDurable and writeSecretFile (owner and mode kept)', () => {
  it('keeps an existing file\'s mode and (as root) its owner, whatever they are, and writes the new content', () => {
    const dir = tempDir();
    fc.assert(fc.property(modes, ids, ids, fc.string({ maxLength: 200 }), (mode, uid, gid, content) => {
      const path = join(dir.path, 'state.json');
      writeFileSync(path, 'old');
      if (root) chownSync(path, uid, gid);
      chmodSync(path, mode);
      writeDurable(path, content);
      assert.deepEqual(owner(path), { uid: root ? uid : owner(path).uid, gid: root ? gid : owner(path).gid, mode });
      assert.equal(readFileSync(path, 'utf8'), content);
    }), { numRuns: 60 });
    assert.deepEqual(readdirSync(dir.path), ['state.json'], 'no temp file is left behind');
    dir.cleanup();
  });

  it('keeps a secret file\'s owner and owner bits, and never its group or other bits', () => {
    const dir = tempDir();
    chmodSync(dir.path, 0o700);
    fc.assert(fc.property(modes, ids, (mode, uid) => {
      const path = join(dir.path, 'accounts.json');
      writeFileSync(path, 'old');
      if (root) chownSync(path, uid, uid);
      chmodSync(path, mode);
      writeSecretFile(path, '{}\n');
      const after = owner(path);
      assert.equal(after.mode, mode & 0o700);
      if (root) assert.deepEqual([after.uid, after.gid], [uid, uid]);
    }), { numRuns: 60 });
    dir.cleanup();
  });

  it('gives a new file 0600 and, as root, the owner of its folder, and new folders the owner of the one above', { skip: root ? false : 'needs root to own files as another user' }, () => {
    const dir = tempDir();
    chownSync(dir.path, NOBODY, NOBODY);
    writeSecretFile(join(dir.path, 'secrets', 'deep', 'credentials.json'), '{"credentials":[]}\n');
    assert.deepEqual(owner(join(dir.path, 'secrets')), { uid: NOBODY, gid: NOBODY, mode: 0o700 });
    assert.deepEqual(owner(join(dir.path, 'secrets', 'deep')), { uid: NOBODY, gid: NOBODY, mode: 0o700 });
    assert.deepEqual(owner(join(dir.path, 'secrets', 'deep', 'credentials.json')), { uid: NOBODY, gid: NOBODY, mode: 0o600 });
    makeOwnedDirs(join(dir.path, 'spool', 'dead'), 0o700);
    assert.equal(owner(join(dir.path, 'spool', 'dead')).uid, NOBODY);
    dir.cleanup();
  });

  it('refuses to write through a symbolic link and leaves its target alone', () => {
    const dir = tempDir();
    const target = join(dir.path, 'elsewhere');
    writeFileSync(target, 'keep');
    symlinkSync(target, join(dir.path, 'state.json'));
    assert.throws(() => writeDurable(join(dir.path, 'state.json'), 'x'), /symbolic link/);
    assert.equal(readFileSync(target, 'utf8'), 'keep');
    // A temp name planted as a link is replaced, not followed.
    symlinkSync(target, join(dir.path, `real.json.tmp-${process.pid}`));
    writeDurable(join(dir.path, 'real.json'), 'new');
    assert.equal(readFileSync(target, 'utf8'), 'keep');
    assert.equal(readFileSync(join(dir.path, 'real.json'), 'utf8'), 'new');
    dir.cleanup();
  });

  it('renames a staged file over another giving it the replaced file\'s owner and mode', { skip: root ? false : 'needs root to own files as another user' }, () => {
    const dir = tempDir();
    const key = join(dir.path, 'key.pem');
    writeFileSync(key, 'old', { mode: 0o400 });
    chownSync(key, NOBODY, 4242);
    writeFileSync(`${key}.pending`, 'new', { mode: 0o600 });
    renameKeepingOwner(`${key}.pending`, key);
    assert.deepEqual(owner(key), { uid: NOBODY, gid: 4242, mode: 0o400 });
    assert.equal(readFileSync(key, 'utf8'), 'new');
    assert.equal(existsSync(`${key}.pending`), false);
    dir.cleanup();
  });

  it('refuses, as a user who is neither root nor the owner, before writing, naming the owner to run as', { skip: root ? false : 'needs root to run a child as another user' }, () => {
    const dir = tempDir();
    chmodSync(dir.path, 0o777);
    const path = join(dir.path, 'accounts.json');
    writeFileSync(path, 'theirs', { mode: 0o644 });
    chownSync(path, 0, 0);
    const run = runnableAs(NOBODY, NOBODY);
    const module = run.repo('dist', 'src', 'kernel', 'secret-files.js');
    const r = spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', run.node, '--input-type=module', '-e',
      `import { writeDurable } from ${JSON.stringify(module)}; try { writeDurable(${JSON.stringify(path)}, 'mine'); } catch (e) { console.log(e.name + ': ' + e.message); }`], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), `ForeignOwnerError: ${path} belongs to root: run this as root (sudo -u root vigil ...)`, r.stderr);
    assert.equal(readFileSync(path, 'utf8'), 'theirs');
    assert.deepEqual(readdirSync(dir.path), ['accounts.json'], 'nothing was written beside it');
    assert.ok(new ForeignOwnerError('/x', 'vigil').message.includes('sudo -u vigil'));
    run.cleanup();
    dir.cleanup();
  });

  it('names a uid by its login, or by its number when it has none', () => {
    assert.equal(userName(0), 'root');
    assert.equal(userName(2_000_000_123), 'uid 2000000123');
  });
});
