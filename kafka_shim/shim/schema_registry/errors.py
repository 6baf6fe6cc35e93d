"""Confluent Schema Registry's errors: an HTTP status and a JSON body `{"error_code": N,
"message": "..."}` whose codes and messages follow Confluent's (its rest.exceptions package),
since clients branch on the code (a 40401 is "no such subject", a 409 "incompatible")."""

from __future__ import annotations


class RegistryError(Exception):
    """One refusal: its HTTP status, Confluent's error code and its message."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(subject: str, version: int | str) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(detail: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, detail)


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
    )


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted"
    )


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40406,
        f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40407,
        f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted",
    )


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(
        404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured"
    )


def subject_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema {detail}")


def invalid_version(text: str) -> RegistryError:
    return RegistryError(
        422,
        42202,
        f"The specified version '{text}' is not a valid version id. Allowed values are between "
        '[1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility_level(text: object) -> RegistryError:
    return RegistryError(
        422,
        42203,
        f"Invalid compatibility level {text!r}. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def invalid_mode(text: object) -> RegistryError:
    return RegistryError(
        422, 42204, f"Invalid mode {text!r}. Valid values are READWRITE, READONLY and IMPORT"
    )


def operation_not_permitted(detail: str) -> RegistryError:
    return RegistryError(422, 42205, detail)


def references_exist(detail: str) -> RegistryError:
    return RegistryError(422, 42206, f"One or more references exist to the schema {detail}.")


def unprocessable(detail: str) -> RegistryError:
    """A request body Confluent's registry answers 422 (a field of the wrong type, missing)."""
    return RegistryError(422, 422, detail)


def incompatible(subject: str, messages: list[str]) -> RegistryError:
    detail = "; ".join(messages)
    return RegistryError(
        409,
        409,
        f'Schema being registered is incompatible with an earlier schema for subject "{subject}", '
        f"details: [{detail}]",
    )


def id_conflict(detail: str) -> RegistryError:
    """IMPORT mode: an id or version already taken by another schema."""
    return RegistryError(409, 409, detail)


def store_error(detail: str) -> RegistryError:
    return RegistryError(500, 50001, f"Error in the backend data store - {detail}")


def denied(principal: str, operation: str, resource: str) -> RegistryError:
    """Confluent's security plugin answers an ACL refusal 403 with error code 40301."""
    return RegistryError(403, 40301, f"User {principal} is denied operation {operation} on {resource}")
