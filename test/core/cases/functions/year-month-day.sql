SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."created_at", "t0"."id" AS "__k0"
      FROM "release" "t0"
      WHERE (TRUE) AND (extract(year FROM "t0"."created_at")::int = $1::int4) AND (extract(month FROM "t0"."created_at")::int = $2::int4) AND (extract(day FROM "t0"."created_at")::int = $3::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "created_at") AS o)::text AS body
-- params: [2026,1,11]
