"""Response certificates: the public keys, and checking a certificate."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import certificates
from daneshyar.api import ok
from daneshyar.schema import envelope
from workspaces.permissions import HasApiKey


class CertificateKeysApi(APIView):
    """The public keys that verify response certificates, as a JWKS (``data``)."""

    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="certificates_keys",
        summary="Public keys that verify certificates",
        description=(
            "The Ed25519 public keys that verify response certificates, as a JWKS in `data` (`keys`: "
            "`kty`, `crv`, `kid`, `x`). Keys rotated out stay published, so older certificates keep "
            "verifying. Fetch once and keep: checking a certificate offline needs only this."
        ),
        tags=["Certificates"],
        responses=envelope(
            "CertificateKeys",
            inline_serializer(
                "Jwks",
                {
                    "keys": inline_serializer(
                        "Jwk",
                        {
                            "kty": serializers.CharField(),
                            "crv": serializers.CharField(),
                            "x": serializers.CharField(),
                            "kid": serializers.CharField(),
                            "alg": serializers.CharField(),
                            "use": serializers.CharField(),
                        },
                        many=True,
                    )
                },
            ),
        ),
    )
    def get(self, request: Request) -> Response:
        return ok(certificates.jwks())


class CertificateVerifyApi(APIView):
    """Check a certificate's signature (and, given the response, that it is the one certified)."""

    permission_classes = [HasApiKey]

    class InputSerializer(serializers.Serializer[Any]):
        certificate = serializers.JSONField()
        response = serializers.JSONField(
            required=False, help_text="The assistant message's response, to check it is the one certified."
        )

        class Meta:
            ref_name = "CertificateVerifyInput"

    @extend_schema(
        operation_id="certificates_verify",
        summary="Verify a certificate",
        description=(
            "Check a certificate's signature and, given the `response` it certifies, that the "
            "response is the one signed. Answers `valid`, a `reason` when it is not, the `key_id` and"
            " the signed `payload`."
        ),
        tags=["Certificates"],
        request=InputSerializer,
        responses=envelope(
            "CertificateVerification",
            inline_serializer(
                "CertificateVerificationResult",
                {
                    "valid": serializers.BooleanField(),
                    "reason": serializers.CharField(allow_null=True),
                    "key_id": serializers.CharField(allow_null=True),
                    "payload": serializers.DictField(allow_null=True),
                },
            ),
        ),
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = certificates.certificate_verify(
            body.validated_data["certificate"], response=body.validated_data.get("response")
        )
        return ok(
            {
                "valid": result.valid,
                "reason": result.reason,
                "key_id": result.key_id,
                "payload": result.payload,
            }
        )
