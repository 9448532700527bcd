// GIN indexes beside FerretDB's own, so that PostgreSQL answers FerretDB's pushed-down filters from
// an index instead of reading the whole table.
//
// FerretDB (v1, PostgreSQL backend) pushes an equality on a top-level field down as
// `(_jsonb -> 'field') @> '<json value>'`, but the indexes it creates for `createIndex` are btree
// indexes on `(_jsonb -> 'field')`, which cannot serve `@>`: measured, even `find({_id})` was a
// sequential scan of the table (8.6 ms at 2,000 documents of 1 KB, growing with the collection).
// A GIN index (jsonb_path_ops) on the same expression turns it into an index scan (0.04 ms).
//
// So an event trigger, installed in template1 (every database created later inherits it) and in
// FerretDB's database, adds after every CREATE TABLE / CREATE INDEX on a FerretDB collection table
// (a table with FerretDB's `_jsonb` column) a GIN index for each top-level field of its btree
// indexes: `_id` always (FerretDB creates its `_id_` index with the table), and every field the
// services index. Nested fields are left out: FerretDB does not push dotted paths down.
// FerretDB never sees these indexes (it lists indexes from its own metadata), DROP TABLE/SCHEMA
// removes them with the collection, and any error in the trigger is only a warning: FerretDB's
// statement never fails because of it. Running this again also adds the missing indexes to the
// existing tables (a cluster made before this file existed).
//
// The same trigger empties FerretDB's other btree indexes. FerretDB never queries through them:
// its pushed-down conditions are `@>` (served by the GIN indexes) and it never pushes a sort down
// (DEVELOPERS.md, "pushdown"); measured after a stack bench, every one of them had 0 scans. Yet
// every insert and every update (FerretDB writes the whole document again) paid for each: the
// requests collection has 13. So each non-unique btree index that is not `_id`'s is replaced by
// one of the same name and columns with the predicate `WHERE false`, which holds no entry and
// costs a write nothing; FerretDB can still drop it by name. Unique indexes stay as they are:
// they enforce uniqueness. MongoDB (production, compose) is untouched: this is the local store's.
export const GIN_INDEX_SQL = String.raw`
-- A FerretDB collection's table: it has FerretDB's _jsonb column and is not FerretDB's metadata.
CREATE OR REPLACE FUNCTION public.sd_ferretdb_collection(tbl regclass) RETURNS boolean
LANGUAGE sql STABLE AS $fn$
  SELECT tbl IS NOT NULL
     AND EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = tbl AND attname = '_jsonb' AND NOT attisdropped)
     AND (SELECT relname FROM pg_class WHERE oid = tbl) NOT LIKE '\_ferretdb\_%'
$fn$;

CREATE OR REPLACE FUNCTION public.sd_ferretdb_gin_indexes(tbl regclass) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  ix record;
  k int;
  field text;
  ixname text;
BEGIN
  IF NOT public.sd_ferretdb_collection(tbl) THEN
    RETURN;
  END IF;
  FOR ix IN SELECT i.indexrelid, i.indnatts
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
            WHERE i.indrelid = tbl AND a.amname = 'btree' LOOP
    FOR k IN 1..ix.indnatts LOOP
      field := substring(pg_get_indexdef(ix.indexrelid, k, false)
                         FROM '^\(+_jsonb -> ''((?:[^'']|'''')*)''::text\)+$');
      CONTINUE WHEN field IS NULL;
      field := replace(field, '''''', '''');
      ixname := left((SELECT relname FROM pg_class WHERE oid = tbl), 40) || '_sdgin_' || left(md5(field), 8);
      BEGIN
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING gin ((_jsonb -> %L) jsonb_path_ops)',
                       ixname, tbl, field);
      EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'support desk: no GIN index on %.%: %', tbl, field, SQLERRM;
      END;
    END LOOP;
  END LOOP;
END $fn$;

CREATE OR REPLACE FUNCTION public.sd_ferretdb_empty_btree_indexes(tbl regclass) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  ix record;
BEGIN
  -- Each replacement is a CREATE INDEX, which fires the trigger again: one pass at a time.
  IF coalesce(current_setting('sd.emptying_indexes', true), '') = 'on'
     OR NOT public.sd_ferretdb_collection(tbl) THEN
    RETURN;
  END IF;
  PERFORM set_config('sd.emptying_indexes', 'on', true);
  FOR ix IN SELECT i.indexrelid::regclass AS name, pg_get_indexdef(i.indexrelid) AS def
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
            WHERE i.indrelid = tbl AND a.amname = 'btree' AND NOT i.indisunique AND i.indpred IS NULL LOOP
    BEGIN
      EXECUTE format('DROP INDEX %s', ix.name);
      EXECUTE ix.def || ' WHERE false';
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'support desk: index % left as it is: %', ix.name, SQLERRM;
    END;
  END LOOP;
  PERFORM set_config('sd.emptying_indexes', 'off', true);
END $fn$;

CREATE OR REPLACE FUNCTION public.sd_ferretdb_gin_trigger() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
    IF cmd.command_tag = 'CREATE TABLE' AND cmd.object_type = 'table' THEN
      PERFORM public.sd_ferretdb_gin_indexes(cmd.objid::regclass);
    ELSIF cmd.command_tag = 'CREATE INDEX' AND cmd.object_type = 'index' THEN
      -- Our own GIN indexes fire this trigger too: only btree indexes lead to more.
      PERFORM public.sd_ferretdb_gin_indexes(i.indrelid::regclass),
              public.sd_ferretdb_empty_btree_indexes(i.indrelid::regclass)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
      WHERE i.indexrelid = cmd.objid AND a.amname = 'btree';
    END IF;
  END LOOP;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'support desk: GIN index trigger: %', SQLERRM;
END $fn$;

DROP EVENT TRIGGER IF EXISTS sd_ferretdb_gin;
CREATE EVENT TRIGGER sd_ferretdb_gin ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE INDEX')
  EXECUTE FUNCTION public.sd_ferretdb_gin_trigger();

SELECT count(public.sd_ferretdb_gin_indexes(c.oid::regclass)),
       count(public.sd_ferretdb_empty_btree_indexes(c.oid::regclass))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema');
`;
