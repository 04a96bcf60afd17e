SELECT (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" < $1::int4)) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."created_at" > $2::timestamptz)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body) AS r) AS "r1"
-- params: [3,"-100000-01-01T00:00:00.000Z"]

SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ("t0"."id" < $1::int4)
-- params: [3]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."created_at" > $1::timestamptz)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body
-- params: ["-100000-01-01T00:00:00.000Z"]

SELECT (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" < $1::int4)) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."created_at" > $2::timestamptz)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body) AS r) AS "r1"
-- params: [3,"-100000-01-01T00:00:00.000Z"]

SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ("t0"."id" < $1::int4)
-- params: [3]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."created_at" > $1::timestamptz)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body
-- params: ["-100000-01-01T00:00:00.000Z"]
