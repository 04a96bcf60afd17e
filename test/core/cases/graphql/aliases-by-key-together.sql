SELECT (SELECT r."body"
    FROM (SELECT (SELECT string_agg(to_json(u.name)::text || ':' || coalesce(keyed.row::text, 'null'), ',' ORDER BY u.i)
        FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(name, key, i)
        LEFT JOIN (SELECT "t0"."__key"::text AS key, to_json(o) AS row
          FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0", "t0"."id" AS "__key"
            FROM "device" "t0"
            WHERE (TRUE) AND ("t0"."id" = ANY($3::int8[]))
            ORDER BY "__k0" ASC) AS "t0"
          CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName") AS o) AS keyed ON keyed.key = u.key) AS body) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."device_name", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."id" = $4::int4)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."device_name" AS "deviceName") AS o)::text AS body) AS r) AS "r1"
-- params: [["a","b","missing","again"],[41,42,987654,41],[41,42,987654,41],42]
