"""Input and output serializers of the arena API. Battle outputs carry sides A and B only; model names
appear under ``reveal`` once the vote is cast in an arena that reveals them."""

from rest_framework import serializers

from arena.domain.battles import LEADERBOARD_COLUMNS, VOTES


class BattleStartInputSerializer(serializers.Serializer):
    prompt = serializers.CharField(trim_whitespace=False)
    language = serializers.CharField(max_length=3)
    register = serializers.CharField(required=False, allow_blank=True, default="")
    category = serializers.CharField(required=False, allow_blank=True, default="")


class BattleContinueInputSerializer(serializers.Serializer):
    prompt = serializers.CharField(trim_whitespace=False)


class BattleVoteInputSerializer(serializers.Serializer):
    vote = serializers.ChoiceField(choices=VOTES)
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class AnswerSerializer(serializers.Serializer):
    status = serializers.CharField()
    text = serializers.CharField()


class TurnSerializer(serializers.Serializer):
    user = serializers.CharField()
    a = AnswerSerializer(allow_null=True)
    b = AnswerSerializer(allow_null=True)


class BattleSerializer(serializers.Serializer):
    battle = serializers.CharField(help_text="The battle's random token.")
    status = serializers.ChoiceField(choices=["streaming", "ready", "voted", "not_counted"])
    ending = serializers.CharField(help_text="timeout or model_error when not counted.")
    language = serializers.CharField()
    register = serializers.CharField()
    category = serializers.CharField()
    turns = TurnSerializer(many=True)
    can_vote = serializers.BooleanField()
    vote = serializers.CharField()
    stream_url = serializers.CharField(help_text="Server-sent events of the current turn.")
    reveal = serializers.DictField(child=serializers.CharField(), allow_null=True)


class BattleRowSerializer(serializers.Serializer):
    def to_representation(self, instance):
        return {column: instance[column] for column in LEADERBOARD_COLUMNS}


class ArenaErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
