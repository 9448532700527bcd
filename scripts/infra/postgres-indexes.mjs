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
// The GIN indexes keep no pending list (`fastupdate = off`): with one, every insert and update
// appends there and every lookup scans the whole list until a vacuum merges it, so reads by `_id`
// slowed with each write burst (0.08 ms a statement in one stack bench, 0.63 ms in the next). A
// write now merges its keys at once: at 15,000 documents inserts cost up to a fifth more store CPU,
// reads by `_id` half as much, updates a third less with the parked indexes below (BENCHMARKS.md,
// issue 37).
//
// The same trigger parks FerretDB's other btree indexes. FerretDB never queries through them:
// its pushed-down conditions are `@>` (served by the GIN indexes) and it never pushes a sort down
// (DEVELOPERS.md, "pushdown"); measured after a stack bench, every one of them had 0 scans. Yet
// on the collection's table every write paid for each (the requests collection has 23), and so
// did every statement's planning: PostgreSQL plans each of FerretDB's statements anew (see
// `plan_cache_mode` in libs/platform/launch/postgres.mjs) and looks at every index of the table.
// So each non-unique btree index that is not `_id`'s is dropped and an index of the same name is
// made on a table of the same schema that holds nothing (`sd_parked_indexes`, `WHERE false`,
// its comment naming the collection's table): FerretDB still finds it by name to drop it, and a
// dropped collection takes its parked indexes along (`sd_ferretdb_parked`). Unique indexes stay:
// they enforce. MongoDB (production, compose) is untouched: this is the local store's.
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
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING gin ((_jsonb -> %L) jsonb_path_ops) '
                       'WITH (fastupdate = off)',
                       ixname, tbl, field);
      EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'support desk: no GIN index on %.%: %', tbl, field, SQLERRM;
      END;
    END LOOP;
  END LOOP;
  -- GIN indexes an earlier version made with a pending list: turned off, and the list merged.
  FOR ix IN SELECT c.oid::regclass AS name
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
            WHERE i.indrelid = tbl AND a.amname = 'gin' AND c.relname LIKE '%\_sdgin\_%'
              AND NOT coalesce(c.reloptions @> ARRAY['fastupdate=off'], false) LOOP
    BEGIN
      EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', ix.name);
      PERFORM gin_clean_pending_list(ix.name);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'support desk: GIN index % keeps its pending list: %', ix.name, SQLERRM;
    END;
  END LOOP;
END $fn$;

-- Where a collection's parked btree indexes live: a table of the collection's schema (index names
-- are unique per schema, so FerretDB's DROP INDEX "db"."name" still finds its index), without
-- _jsonb, so neither FerretDB nor these functions take it for a collection.
-- Owned by the collection's owner (FerretDB's role), who drops the indexes on it, also when this
-- script, run as the superuser, made it.
CREATE OR REPLACE FUNCTION public.sd_ferretdb_parking(tbl regclass) RETURNS regclass
LANGUAGE plpgsql AS $fn$
DECLARE
  schema_name text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = tbl);
  parking regclass;
BEGIN
  parking := to_regclass(format('%I.sd_parked_indexes', schema_name));
  IF parking IS NULL THEN
    EXECUTE format('CREATE TABLE %I.sd_parked_indexes (owner text)', schema_name);
    parking := format('%I.sd_parked_indexes', schema_name)::regclass;
    EXECUTE format('ALTER TABLE %s OWNER TO %I', parking,
                   (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = tbl));
  END IF;
  RETURN parking;
END $fn$;

CREATE OR REPLACE FUNCTION public.sd_ferretdb_park_btree_indexes(tbl regclass) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  ix record;
  parking regclass;
BEGIN
  -- Each parked index is a CREATE INDEX, which fires the trigger again: one pass at a time.
  IF coalesce(current_setting('sd.parking_indexes', true), '') = 'on'
     OR NOT public.sd_ferretdb_collection(tbl) THEN
    RETURN;
  END IF;
  PERFORM set_config('sd.parking_indexes', 'on', true);
  -- Non-unique btree indexes, and the empty stubs (WHERE false) an earlier version left in their place.
  FOR ix IN SELECT n.nspname AS schema_name, c.relname AS index_name, t.relname AS table_name
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                 JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE i.indrelid = tbl AND a.amname = 'btree' AND NOT i.indisunique
              AND (i.indpred IS NULL OR pg_get_expr(i.indpred, i.indrelid) = 'false') LOOP
    BEGIN
      parking := public.sd_ferretdb_parking(tbl);
      EXECUTE format('DROP INDEX %I.%I', ix.schema_name, ix.index_name);
      EXECUTE format('CREATE INDEX %I ON %s (owner) WHERE false', ix.index_name, parking);
      EXECUTE format('COMMENT ON INDEX %I.%I IS %L', ix.schema_name, ix.index_name, ix.table_name);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'support desk: index %.% left as it is: %', ix.schema_name, ix.index_name, SQLERRM;
    END;
  END LOOP;
  PERFORM set_config('sd.parking_indexes', 'off', true);
END $fn$;

-- A collection dropped (FerretDB's DROP TABLE) takes its parked indexes along, as it would its own:
-- FerretDB may create the same names again for a collection of the same name.
CREATE OR REPLACE FUNCTION public.sd_ferretdb_parked_cleanup() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  dropped record;
  ix record;
BEGIN
  FOR dropped IN SELECT * FROM pg_event_trigger_dropped_objects()
                 WHERE object_type = 'table' AND NOT is_temporary LOOP
    FOR ix IN SELECT c.relname AS index_name
              FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = to_regclass(format('%I.sd_parked_indexes', dropped.schema_name))
                AND obj_description(c.oid, 'pg_class') = dropped.object_name LOOP
      EXECUTE format('DROP INDEX %I.%I', dropped.schema_name, ix.index_name);
    END LOOP;
  END LOOP;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'support desk: parked indexes of a dropped collection: %', SQLERRM;
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
              public.sd_ferretdb_park_btree_indexes(i.indrelid::regclass)
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

DROP EVENT TRIGGER IF EXISTS sd_ferretdb_parked;
CREATE EVENT TRIGGER sd_ferretdb_parked ON sql_drop
  WHEN TAG IN ('DROP TABLE')
  EXECUTE FUNCTION public.sd_ferretdb_parked_cleanup();
DROP FUNCTION IF EXISTS public.sd_ferretdb_empty_btree_indexes(regclass);

SELECT count(public.sd_ferretdb_gin_indexes(c.oid::regclass)),
       count(public.sd_ferretdb_park_btree_indexes(c.oid::regclass))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema');
`;
